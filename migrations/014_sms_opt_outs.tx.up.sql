-- SMS opt-outs (decisions.md, "SMS compliance and scheduling"). A person who
-- opted out of an account's messages hears from none of its numbers: the
-- opt-out is kept per (account, remote number), with since, its source and
-- the message that caused it (the inbound keyword, or the send the carrier
-- refused with 21610).
CREATE TABLE sms_opt_outs (
    account_id text NOT NULL REFERENCES accounts (id),
    phone      text NOT NULL,
    since      timestamptz NOT NULL DEFAULT now(),
    source     text NOT NULL CHECK (source IN ('keyword', 'carrier_21610', 'api', 'console')),
    message_id bigint REFERENCES sms_messages (id),
    PRIMARY KEY (account_id, phone)
);

--bun:split

-- GET /sms/opt-outs: newest first, paged.
CREATE INDEX sms_opt_outs_list_idx ON sms_opt_outs (account_id, since DESC, phone);

--bun:split

-- Every change of an opt-out (opted out or back in), in order: each raises
-- one sms.opt_out.changed event, named by its id.
CREATE TABLE sms_opt_out_changes (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    phone      text NOT NULL,
    opted_out  boolean NOT NULL,
    source     text NOT NULL CHECK (source IN ('keyword', 'carrier_21610', 'api', 'console')),
    message_id bigint REFERENCES sms_messages (id),
    created_at timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX sms_opt_out_changes_message_idx ON sms_opt_out_changes (message_id) WHERE message_id IS NOT NULL;

--bun:split

-- Keywords an account adds to the platform's (stored case-folded, as
-- compared); the defaults cannot be removed, so they are not stored.
CREATE TABLE sms_keywords (
    account_id text NOT NULL REFERENCES accounts (id),
    keyword    text NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('opt_out', 'opt_in', 'help')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, keyword)
);

--bun:split

-- The account's own answers to STOP, START and HELP; NULL: the platform's
-- default in the account's locale.
CREATE TABLE sms_reply_texts (
    account_id text PRIMARY KEY REFERENCES accounts (id),
    opt_out    text,
    opt_in     text,
    help       text
);

--bun:split

-- kind: 'auto' for Parley's answers to the keywords (free, outside quotas);
-- keyword: which keyword an inbound message was; reply_to: the inbound
-- message an auto answer answers (once). A recipient refused for an opt-out
-- ends 'opted_out'.
ALTER TABLE sms_messages
    ADD COLUMN kind text NOT NULL DEFAULT 'standard' CHECK (kind IN ('standard', 'auto')),
    ADD COLUMN keyword text CHECK (keyword IN ('opt_out', 'opt_in', 'help')),
    ADD COLUMN reply_to bigint REFERENCES sms_messages (id),
    DROP CONSTRAINT sms_messages_status_check,
    ADD CONSTRAINT sms_messages_status_check
        CHECK (status IN ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'received', 'opted_out'));

--bun:split

CREATE UNIQUE INDEX sms_messages_reply_to_idx ON sms_messages (reply_to) WHERE reply_to IS NOT NULL;
