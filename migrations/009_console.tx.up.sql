-- The web console's credentials. Only the SHA-256 of each secret is kept: a
-- copy of the database signs nobody in.
--
-- A sign-in link is mailed to the account's address and works once, for a
-- short while.
CREATE TABLE console_signin_links (
    token_hash text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);

--bun:split

CREATE INDEX console_signin_links_account ON console_signin_links (account_id, created_at);

--bun:split

-- A browser session: the cookie's secret, hashed. Signing out sets ended_at.
CREATE TABLE console_sessions (
    id         bigserial PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    ended_at   timestamptz
);
