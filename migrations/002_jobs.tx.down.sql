DROP TABLE IF EXISTS poll_floors;
--bun:split
DROP TABLE IF EXISTS notifications;
--bun:split
DROP TABLE IF EXISTS subtitle_versions;
--bun:split
DROP TABLE IF EXISTS jobs;
