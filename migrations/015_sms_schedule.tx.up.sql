-- Scheduled sends, cancel and quiet hours. A message is 'scheduled' until its
-- send starts (send_at), 'waiting' while its recipient's quiet hours last
-- (not_before), and 'canceled' when a cancel reached it before the carrier
-- did. A batch records when it was canceled, so that a send beginning after
-- the cancel finds it. An account may keep default quiet hours.
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_status_check;

--bun:split

ALTER TABLE sms_messages ADD CONSTRAINT sms_messages_status_check CHECK (status IN
    ('scheduled', 'waiting', 'queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'canceled', 'received',
     'opted_out'));

--bun:split

ALTER TABLE sms_messages ADD COLUMN send_at timestamptz, ADD COLUMN not_before timestamptz;

--bun:split

ALTER TABLE sms_batches DROP CONSTRAINT sms_batches_status_check;

--bun:split

ALTER TABLE sms_batches ADD CONSTRAINT sms_batches_status_check CHECK (status IN
    ('scheduled', 'queued', 'processing', 'completed', 'partial', 'failed', 'canceled'));

--bun:split

-- quiet_start/quiet_end are "HH:MM" in each recipient's local time.
ALTER TABLE sms_batches ADD COLUMN send_at timestamptz, ADD COLUMN quiet_start text, ADD COLUMN quiet_end text,
    ADD COLUMN canceled_at timestamptz;

--bun:split

ALTER TABLE accounts ADD COLUMN sms_quiet_start text, ADD COLUMN sms_quiet_end text,
    ADD CONSTRAINT accounts_sms_quiet_hours_check CHECK ((sms_quiet_start IS NULL) = (sms_quiet_end IS NULL));

--bun:split

-- Messages not yet accepted by the carrier hold their price in reserve,
-- scheduled and waiting ones too.
DROP INDEX sms_messages_reserved_idx;

--bun:split

CREATE INDEX sms_messages_reserved_idx ON sms_messages (account_id) WHERE status IN ('scheduled', 'waiting', 'queued');
