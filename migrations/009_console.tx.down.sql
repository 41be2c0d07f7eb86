DROP TABLE console_sessions;

--bun:split

DROP TABLE console_signin_links;
