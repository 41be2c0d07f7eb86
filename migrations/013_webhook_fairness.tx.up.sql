-- The attempts in flight to each endpoint, one row per delivery whose
-- attempt holds a place: every worker process counts them before it posts,
-- so the caps on an endpoint's and an account's attempts at once hold
-- across processes. A row whose holder died stops counting at expires_at.
-- Unlogged: a lease is worth nothing after a server crash, and every
-- attempt writes two rows' worth of WAL less.
CREATE UNLOGGED TABLE webhook_leases (
    delivery_id bigint PRIMARY KEY,
    account_id  text NOT NULL,
    endpoint_id bigint NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX webhook_leases_account ON webhook_leases (account_id, endpoint_id);

--bun:split

-- Attempts recorded before errors were categories carry the transport's own
-- text: each becomes the category it was (docs/api.md, "Deliveries"), and a
-- non-2xx answer says its status, as new attempts do.
UPDATE webhook_attempts SET error = CASE
    WHEN error LIKE 'url not allowed: host does not resolve%' OR error LIKE 'url not allowed: could not resolve host%'
        OR error LIKE '%no such host%' OR error LIKE '%server misbehaving%' THEN 'DNS failure'
    WHEN error LIKE 'url not allowed: %' THEN 'URL refused: ' || split_part(substr(error, 18), ': ', 1)
    WHEN error LIKE 'build request: %' THEN 'URL refused: malformed URL'
    WHEN error LIKE '%TLS handshake timeout%' OR error LIKE '%dial tcp%i/o timeout%' THEN 'connect timeout after 10 s'
    WHEN error LIKE '%deadline exceeded%' OR error LIKE '%Client.Timeout%' OR error LIKE '%timeout%' THEN 'timeout after 15 s'
    WHEN error LIKE '%connection refused%' THEN 'connection refused'
    WHEN error LIKE '%network is unreachable%' OR error LIKE '%no route to host%' THEN 'network unreachable'
    WHEN error LIKE '%tls: %' OR error LIKE '%x509: %' THEN 'TLS failure'
    WHEN error LIKE '%connection reset%' OR error LIKE '%broken pipe%' OR error LIKE '%EOF%' THEN 'connection reset'
    ELSE 'connection failed'
END
WHERE error IS NOT NULL AND error !~ '^(timeout after [0-9]+ s|connect timeout after [0-9]+ s|connection refused|connection reset|network unreachable|DNS failure|TLS failure|connection failed|HTTP status [0-9]{3}|URL refused: .+)$';

--bun:split

UPDATE webhook_attempts SET error = 'HTTP status ' || status_code
WHERE error IS NULL AND status_code IS NOT NULL AND status_code NOT BETWEEN 200 AND 299;
