-- A batch is admitted as one row holding its recipients' messages in
-- arrays (in recipient order, their ids taken at admission); the batch's
-- workflow inserts them into sms_messages as its first step and deletes
-- the row. Admitting 10,000 recipients then writes one row rather than
-- 10,000 message rows, each with its indexes and foreign-key checks. While
-- the row exists it holds the batch's price in reserve (reserved_micros:
-- the prices of the recipients not opted out), and the batch's view reads
-- its recipients from it.
CREATE TABLE sms_batch_pending (
    batch_id        bigint PRIMARY KEY REFERENCES sms_batches (id),
    account_id      text NOT NULL REFERENCES accounts (id),
    owned_number_id bigint NOT NULL REFERENCES owned_numbers (id),
    from_phone      text NOT NULL,
    reserved_micros bigint NOT NULL CHECK (reserved_micros >= 0),
    created_at      timestamptz NOT NULL,
    send_at         timestamptz,
    ids             bigint[] NOT NULL,
    to_phones       text[] NOT NULL,
    countries       text[] NOT NULL,
    bodies          text[] NOT NULL,
    segments        integer[] NOT NULL,
    encodings       text[] NOT NULL,
    statuses        text[] NOT NULL,
    error_codes     text[] NOT NULL,
    error_messages  text[] NOT NULL,
    prices          bigint[] NOT NULL,
    costs           bigint[] NOT NULL
);

--bun:split

CREATE INDEX sms_batch_pending_account_idx ON sms_batch_pending (account_id);
