DELETE FROM prices WHERE item = 'voice_minute';
--bun:split
DROP TABLE IF EXISTS conversations;
--bun:split
DROP TABLE IF EXISTS voice_agents;
