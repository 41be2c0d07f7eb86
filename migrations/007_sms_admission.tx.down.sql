CREATE INDEX sms_messages_quota_idx ON sms_messages (account_id, created_at) WHERE direction = 'outbound';

--bun:split

DROP TABLE sms_daily_counts;

--bun:split

DROP INDEX sms_messages_upstream_sid_key;

--bun:split

ALTER TABLE sms_messages ADD CONSTRAINT sms_messages_upstream_sid_key UNIQUE (upstream_sid);
