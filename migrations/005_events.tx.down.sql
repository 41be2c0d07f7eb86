ALTER TABLE notifications DROP COLUMN IF EXISTS reason, DROP COLUMN IF EXISTS status;
--bun:split
DROP TABLE IF EXISTS push_subscriptions;
--bun:split
DROP TABLE IF EXISTS webhook_attempts;
--bun:split
DROP TABLE IF EXISTS webhook_deliveries;
--bun:split
DROP TABLE IF EXISTS webhook_endpoints;
--bun:split
DROP TABLE IF EXISTS events;
