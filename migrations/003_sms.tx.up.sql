-- SMS: owned numbers, per-account country and quota overrides, prices with a
-- platform cost, batches, messages (one row per recipient or inbound
-- message) and the conversation threads they belong to.

-- NULL: the default list from PARLEY_SMS_COUNTRIES.
ALTER TABLE accounts ADD COLUMN sms_countries text[];

--bun:split

-- What a unit costs the platform (SMS: per segment, from the carrier).
ALTER TABLE prices ADD COLUMN cost_micros bigint CHECK (cost_micros >= 0);

--bun:split

INSERT INTO prices (item, micros, unit, cost_micros) VALUES
    ('sms:US', 10000, 'segment', 7900),
    ('sms:IL', 60000, 'segment', 45000);

--bun:split

CREATE TABLE owned_numbers (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    phone      text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX owned_numbers_account_idx ON owned_numbers (account_id);

--bun:split

-- An operator's override of the daily quota: country is an ISO 3166 code,
-- '*' for any other enabled country (paid accounts) or 'free' for the daily
-- total of a free account.
CREATE TABLE sms_quotas (
    account_id text NOT NULL REFERENCES accounts (id),
    country    text NOT NULL,
    per_day    integer NOT NULL CHECK (per_day >= 0),
    PRIMARY KEY (account_id, country)
);

--bun:split

CREATE TABLE sms_threads (
    id                  bigserial PRIMARY KEY,
    account_id          text NOT NULL REFERENCES accounts (id),
    owned_number_id     bigint NOT NULL REFERENCES owned_numbers (id),
    remote_phone        text NOT NULL,
    remote_contact_name text,
    last_message_at     timestamptz NOT NULL DEFAULT now(),
    unread_count        integer NOT NULL DEFAULT 0 CHECK (unread_count >= 0),
    archived_at         timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owned_number_id, remote_phone)
);

--bun:split

-- GET /sms/threads: an account's threads by latest activity, archived apart.
CREATE INDEX sms_threads_list_idx ON sms_threads (account_id, (archived_at IS NOT NULL), last_message_at DESC, id DESC);

--bun:split

CREATE TABLE sms_batches (
    id               bigserial PRIMARY KEY,
    account_id       text NOT NULL REFERENCES accounts (id),
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'processing', 'completed', 'partial', 'failed')),
    total_recipients integer NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    completed_at     timestamptz
);

--bun:split

CREATE TABLE sms_messages (
    id            bigserial PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts (id),
    thread_id     bigint NOT NULL REFERENCES sms_threads (id),
    batch_id      bigint REFERENCES sms_batches (id),
    direction     text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
    from_phone    text NOT NULL,
    to_phone      text NOT NULL,
    country       text NOT NULL,
    body          text NOT NULL,
    segments      integer NOT NULL,
    encoding      text NOT NULL CHECK (encoding IN ('gsm7', 'ucs2')),
    status        text NOT NULL
                  CHECK (status IN ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'received')),
    upstream_sid  text UNIQUE,
    error_code    text,
    error_message text,
    -- price to the user and cost to the platform; until the carrier accepts
    -- the message they are the estimate its reservation holds
    price_micros  bigint NOT NULL DEFAULT 0,
    cost_micros   bigint NOT NULL DEFAULT 0,
    -- when the first attempt to hand it to the carrier began: a retry looks
    -- the message up at the carrier from then on before sending again
    send_attempted_at timestamptz,
    sent_at       timestamptz,
    delivered_at  timestamptz,
    read_at       timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX sms_messages_batch_idx ON sms_messages (batch_id, id) WHERE batch_id IS NOT NULL;

--bun:split

-- GET /sms/threads/{id}: a thread's messages newest first, paged by id.
CREATE INDEX sms_messages_thread_idx ON sms_messages (thread_id, id DESC);

--bun:split

-- The daily quota counts an account's outbound messages of the UTC day.
CREATE INDEX sms_messages_quota_idx ON sms_messages (account_id, created_at) WHERE direction = 'outbound';

--bun:split

-- Messages not yet accepted by the carrier hold their price in reserve.
CREATE INDEX sms_messages_reserved_idx ON sms_messages (account_id) WHERE status = 'queued';
