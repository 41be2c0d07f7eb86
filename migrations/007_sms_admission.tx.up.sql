-- A message has a carrier sid only once the carrier took it (or it came in):
-- a unique index over the sids alone, rather than over every row's NULL,
-- spares each admitted message an index entry (a 10,000-recipient batch
-- inserts 10,000 rows under the account's lock).
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_upstream_sid_key;

--bun:split

CREATE UNIQUE INDEX sms_messages_upstream_sid_key ON sms_messages (upstream_sid) WHERE upstream_sid IS NOT NULL;

--bun:split

-- Outbound messages admitted per account, UTC day and destination country:
-- the daily quota reads these few rows instead of counting the day's
-- messages (a busy account sends tens of thousands), and admission adds to
-- them in its transaction.
CREATE TABLE sms_daily_counts (
    account_id text NOT NULL REFERENCES accounts (id),
    day        date NOT NULL,
    country    text NOT NULL,
    messages   integer NOT NULL CHECK (messages >= 0),
    PRIMARY KEY (account_id, day, country)
);

--bun:split

INSERT INTO sms_daily_counts (account_id, day, country, messages)
SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, country, count(*)
FROM sms_messages
WHERE direction = 'outbound' AND created_at >= (now() AT TIME ZONE 'UTC')::date - 1
GROUP BY 1, 2, 3;

--bun:split

-- It served only the count the table above replaces.
DROP INDEX sms_messages_quota_idx;
