CREATE TABLE accounts (
    id                    text PRIMARY KEY,
    email                 text NOT NULL UNIQUE,
    name                  text NOT NULL,
    role                  text NOT NULL DEFAULT 'user',
    locale                text NOT NULL DEFAULT 'en',
    paid                  boolean NOT NULL DEFAULT false,
    phone                 text,
    phone_verified        boolean NOT NULL DEFAULT false,
    balance_micros        bigint NOT NULL DEFAULT 0 CHECK (balance_micros >= 0),
    concurrent_jobs_limit integer CHECK (concurrent_jobs_limit >= 0),
    created_at            timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE TABLE api_keys (
    id           bigserial PRIMARY KEY,
    account_id   text NOT NULL REFERENCES accounts (id),
    name         text NOT NULL,
    prefix       text NOT NULL UNIQUE,
    secret_hash  bytea NOT NULL,
    owner_type   text NOT NULL CHECK (owner_type IN ('user', 'admin')),
    scopes       text[] NOT NULL,
    tier         text NOT NULL DEFAULT 'standard',
    expires_at   timestamptz,
    last_used_at timestamptz,
    revoked_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX api_keys_account_idx ON api_keys (account_id);

--bun:split

-- Append-only: every movement of credit, with a unique key so a retried
-- charge or top-up is recorded once.
CREATE TABLE credit_ledger (
    id              bigserial PRIMARY KEY,
    account_id      text NOT NULL REFERENCES accounts (id),
    kind            text NOT NULL CHECK (kind IN ('topup', 'charge', 'refund')),
    service         text NOT NULL DEFAULT '',
    amount_micros   bigint NOT NULL,
    balance_after   bigint NOT NULL,
    idempotency_key text NOT NULL UNIQUE,
    job_kind        text,
    job_id          bigint,
    stage           text,
    note            text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX credit_ledger_account_idx ON credit_ledger (account_id, created_at);

--bun:split

CREATE TABLE prices (
    item          text PRIMARY KEY,
    micros        bigint NOT NULL CHECK (micros >= 0),
    unit          text NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

--bun:split

INSERT INTO prices (item, micros, unit) VALUES
    ('transcription', 6000, 'minute'),
    ('voice_cleanup', 10000, 'minute'),
    ('subtitle_burn', 20000, 'minute');

--bun:split

CREATE TABLE settings (
    name  text PRIMARY KEY,
    value bigint NOT NULL
);

--bun:split

INSERT INTO settings (name, value) VALUES
    ('platform_concurrent_jobs', 50),
    ('default_concurrent_jobs', 3);

--bun:split

-- Fixed-window request counters shared by every API replica.
CREATE TABLE rate_counters (
    key_id       bigint NOT NULL,
    window_name  text NOT NULL,
    window_start timestamptz NOT NULL,
    count        integer NOT NULL,
    PRIMARY KEY (key_id, window_name, window_start)
);

--bun:split

-- A job holds one admission slot (and its estimated charge as a reservation)
-- from admission until it reaches a final state.
CREATE TABLE job_admissions (
    id              bigserial PRIMARY KEY,
    account_id      text NOT NULL REFERENCES accounts (id),
    job_kind        text NOT NULL,
    job_id          bigint NOT NULL,
    estimate_micros bigint NOT NULL DEFAULT 0,
    admitted_at     timestamptz NOT NULL DEFAULT now(),
    released_at     timestamptz,
    UNIQUE (job_kind, job_id)
);

--bun:split

CREATE INDEX job_admissions_open_idx ON job_admissions (account_id) WHERE released_at IS NULL;

--bun:split

CREATE TABLE usage_daily (
    account_id   text NOT NULL REFERENCES accounts (id),
    day          date NOT NULL,
    api_requests bigint NOT NULL DEFAULT 0,
    api_errors   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day)
);
