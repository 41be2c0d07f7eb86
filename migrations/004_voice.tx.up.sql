-- Voice agents an operator mapped to accounts: only their conversations are
-- read. synced_until is the sync's high-water mark (the start of the newest
-- conversation a completed listing saw); NULL until the first sync, which
-- then reaches back PARLEY_VOICE_BACKFILL.
CREATE TABLE voice_agents (
    agent_id     text PRIMARY KEY,
    account_id   text NOT NULL REFERENCES accounts (id),
    name         text NOT NULL DEFAULT '',
    synced_until timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX voice_agents_account_idx ON voice_agents (account_id);

--bun:split

-- One row per provider conversation, written only by idempotent upserts
-- (a sync, the post-call webhook and replays may all bring the same call).
-- cost_micros is set once, when the call is first seen ended, so a price
-- change never alters what a call was charged; charged_at marks the ledger
-- entry (key (conversation, voice_minute)) as posted.
CREATE TABLE conversations (
    id               bigserial PRIMARY KEY,
    account_id       text NOT NULL REFERENCES accounts (id),
    provider_id      text NOT NULL UNIQUE,
    agent_id         text NOT NULL,
    agent_name       text NOT NULL DEFAULT '',
    provider_status  text NOT NULL DEFAULT '',
    direction        text NOT NULL DEFAULT '',
    from_number      text NOT NULL DEFAULT '',
    to_number        text NOT NULL DEFAULT '',
    duration_seconds integer NOT NULL DEFAULT 0,
    started_at       timestamptz NOT NULL,
    ended_at         timestamptz NOT NULL,
    main_language    text NOT NULL DEFAULT '',
    summary_title    text NOT NULL DEFAULT '',
    summary          text NOT NULL DEFAULT '',
    has_audio        boolean NOT NULL DEFAULT false,
    has_analysis     boolean NOT NULL DEFAULT false,
    data_collection  jsonb,
    evaluation       jsonb,
    transcript       jsonb NOT NULL DEFAULT '[]',
    cost_micros      bigint CHECK (cost_micros >= 0),
    charged_at       timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX conversations_list_idx ON conversations (account_id, started_at DESC, id DESC);

--bun:split

-- What a sync revisits: calls stored before their analysis or charge.
CREATE INDEX conversations_unsettled_idx ON conversations (agent_id, started_at)
    WHERE NOT has_analysis OR charged_at IS NULL;

--bun:split

-- Voice calls are billed per second at a per-minute price.
INSERT INTO prices (item, micros, unit) VALUES ('voice_minute', 100000, 'minute')
    ON CONFLICT (item) DO NOTHING;
