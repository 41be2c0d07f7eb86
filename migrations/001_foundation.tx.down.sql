DROP TABLE IF EXISTS usage_daily;
--bun:split
DROP TABLE IF EXISTS job_admissions;
--bun:split
DROP TABLE IF EXISTS rate_counters;
--bun:split
DROP TABLE IF EXISTS settings;
--bun:split
DROP TABLE IF EXISTS prices;
--bun:split
DROP TABLE IF EXISTS credit_ledger;
--bun:split
DROP TABLE IF EXISTS api_keys;
--bun:split
DROP TABLE IF EXISTS accounts;
