-- A transcript is edited in versions: jobs.words and jobs.transcript_text
-- always hold the newest, numbered transcript_version (1 is the engine's);
-- every version an edit replaced is kept here.
ALTER TABLE jobs ADD COLUMN transcript_version integer NOT NULL DEFAULT 1;

--bun:split

CREATE TABLE transcript_versions (
    job_id     bigint NOT NULL REFERENCES jobs (id),
    version    integer NOT NULL,
    text       text NOT NULL,
    words      jsonb,
    -- when an edit replaced it with the next version
    replaced_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, version)
);

--bun:split

-- A subtitle job's SRT rebuilt from an edited transcript is a version of
-- its own kind.
ALTER TABLE subtitle_versions DROP CONSTRAINT subtitle_versions_source_check,
    ADD CONSTRAINT subtitle_versions_source_check CHECK (source IN ('generated', 'edit', 'transcript'));
