-- Events: one row per occurrence of something an account's endpoints may be
-- told about. (type, subject) is unique, so emitting the same occurrence twice
-- (a retried activity, a replayed workflow) keeps the first row and its id,
-- which is the webhook-id every delivery of it carries.
CREATE TABLE events (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    type       text NOT NULL,
    subject    text NOT NULL,
    payload    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (type, subject)
);

--bun:split

-- An account's webhook endpoints. The secret must be kept readable: every
-- delivery is signed with it (HMAC), so it cannot be stored as a hash.
CREATE TABLE webhook_endpoints (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    url        text NOT NULL,
    events     text[] NOT NULL DEFAULT '{}',
    secret     text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id) WHERE deleted_at IS NULL;

--bun:split

-- One delivery per (event, endpoint): the unit a delivery workflow works on
-- and a replay starts again.
CREATE TABLE webhook_deliveries (
    id          bigserial PRIMARY KEY,
    account_id  text NOT NULL REFERENCES accounts (id),
    event_id    bigint NOT NULL REFERENCES events (id),
    endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id),
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

--bun:split

-- Every attempt of a delivery, as the endpoint answered it.
CREATE TABLE webhook_attempts (
    id          bigserial PRIMARY KEY,
    delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id),
    status_code int,
    latency_ms  int NOT NULL,
    error       text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

--bun:split

-- Browsers' Web Push subscriptions of the account owner.
CREATE TABLE push_subscriptions (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    endpoint   text NOT NULL,
    p256dh     text NOT NULL,
    auth       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, endpoint)
);

--bun:split

-- The notification outbox records how each channel ended.
ALTER TABLE notifications
    ADD COLUMN status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'skipped', 'failed')),
    ADD COLUMN reason text;
