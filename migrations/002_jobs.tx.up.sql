-- Transcription and subtitle jobs share one lifecycle (admission, status,
-- charges, failure, soft delete), so they share one table.
CREATE TABLE jobs (
    id                  bigserial PRIMARY KEY,
    account_id          text NOT NULL REFERENCES accounts (id),
    kind                text NOT NULL CHECK (kind IN ('transcription', 'subtitles')),
    status              text NOT NULL DEFAULT 'queued'
                        CHECK (status IN ('queued', 'processing', 'transcribing', 'burning', 'done', 'failed')),
    input_kind          text NOT NULL DEFAULT 'file' CHECK (input_kind IN ('file', 'url')),
    file_name           text NOT NULL DEFAULT '',
    source_url          text,
    source              text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'ui')),
    media_key           text,
    media_digest        text,
    language_requested  text NOT NULL DEFAULT 'auto',
    language_detected   text,
    duration_sec        double precision,
    width               integer,
    height              integer,
    transcript_text     text NOT NULL DEFAULT '',
    words               jsonb,
    cost_micros         bigint NOT NULL DEFAULT 0,
    use_voice_cleanup   boolean NOT NULL DEFAULT false,
    cleanup_cost_micros bigint NOT NULL DEFAULT 0,
    burn_cost_micros    bigint NOT NULL DEFAULT 0,
    style               jsonb,
    style_note          text,
    output_key          text,
    burn_runs           integer NOT NULL DEFAULT 0,
    reburn_error_code    text,
    reburn_error_message text,
    email_after         boolean NOT NULL DEFAULT false,
    sms_after           boolean NOT NULL DEFAULT false,
    idempotency_key     text,
    request_hash        text,
    error_code          text,
    error_message       text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    started_at          timestamptz,
    completed_at        timestamptz,
    deleted_at          timestamptz
);

--bun:split

CREATE UNIQUE INDEX jobs_idempotency_idx ON jobs (account_id, kind, idempotency_key) WHERE idempotency_key IS NOT NULL;

--bun:split

CREATE INDEX jobs_list_idx ON jobs (account_id, kind, id DESC) WHERE deleted_at IS NULL;

--bun:split

CREATE INDEX jobs_running_idx ON jobs (account_id) WHERE status NOT IN ('done', 'failed');

--bun:split

-- Every saved SRT of a subtitle job; the highest version is current.
CREATE TABLE subtitle_versions (
    job_id     bigint NOT NULL REFERENCES jobs (id),
    version    integer NOT NULL,
    srt        text NOT NULL,
    source     text NOT NULL CHECK (source IN ('generated', 'edit')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, version)
);

--bun:split

-- Completion notifications waiting for a delivery channel (outbox).
CREATE TABLE notifications (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    job_id     bigint NOT NULL REFERENCES jobs (id),
    channel    text NOT NULL CHECK (channel IN ('push', 'email', 'sms')),
    event      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz,
    UNIQUE (job_id, channel, event)
);

--bun:split

-- Minimum interval between polls of one endpoint by one key.
CREATE TABLE poll_floors (
    key_id  bigint NOT NULL,
    route   text NOT NULL,
    last_at timestamptz NOT NULL,
    PRIMARY KEY (key_id, route)
);
