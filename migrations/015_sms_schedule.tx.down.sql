DROP INDEX sms_messages_reserved_idx;

--bun:split

CREATE INDEX sms_messages_reserved_idx ON sms_messages (account_id) WHERE status = 'queued';

--bun:split

ALTER TABLE accounts DROP CONSTRAINT accounts_sms_quiet_hours_check, DROP COLUMN sms_quiet_start, DROP COLUMN sms_quiet_end;

--bun:split

ALTER TABLE sms_batches DROP COLUMN send_at, DROP COLUMN quiet_start, DROP COLUMN quiet_end, DROP COLUMN canceled_at;

--bun:split

ALTER TABLE sms_batches DROP CONSTRAINT sms_batches_status_check;

--bun:split

UPDATE sms_batches SET status = CASE status WHEN 'scheduled' THEN 'queued' ELSE 'failed' END
    WHERE status IN ('scheduled', 'canceled');

--bun:split

ALTER TABLE sms_batches ADD CONSTRAINT sms_batches_status_check
    CHECK (status IN ('queued', 'processing', 'completed', 'partial', 'failed'));

--bun:split

ALTER TABLE sms_messages DROP COLUMN send_at, DROP COLUMN not_before;

--bun:split

ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_status_check;

--bun:split

UPDATE sms_messages SET status = 'queued' WHERE status IN ('scheduled', 'waiting');

--bun:split

UPDATE sms_messages SET status = 'failed' WHERE status = 'canceled';

--bun:split

ALTER TABLE sms_messages ADD CONSTRAINT sms_messages_status_check
    CHECK (status IN ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'received', 'opted_out'));
