DROP TABLE sms_messages;

--bun:split

DROP TABLE sms_batches;

--bun:split

DROP TABLE sms_threads;

--bun:split

DROP TABLE sms_quotas;

--bun:split

DROP TABLE owned_numbers;

--bun:split

DELETE FROM prices WHERE item LIKE 'sms:%';

--bun:split

ALTER TABLE prices DROP COLUMN cost_micros;

--bun:split

ALTER TABLE accounts DROP COLUMN sms_countries;
