-- Live progress of a job (GET /transcribe/{id}, /subtitles/{id}, their lists
-- and GET /jobs/running). The activities write it, throttled to once a
-- second per job, and every write is conditional so it never moves back
-- within a run (see storage.Jobs.Progress). NULL stage: nothing written yet
-- (rows from before this migration); readers fall back to the status.
ALTER TABLE jobs
    ADD COLUMN progress_stage       text,
    ADD COLUMN progress_fraction    double precision CHECK (progress_fraction BETWEEN 0 AND 1),
    ADD COLUMN progress_attempt     integer NOT NULL DEFAULT 0,
    ADD COLUMN progress_chunks      integer CHECK (progress_chunks > 0),
    ADD COLUMN progress_chunks_done integer NOT NULL DEFAULT 0 CHECK (progress_chunks_done >= 0),
    ADD COLUMN progress_updated_at  timestamptz;

--bun:split

-- The chunks of a split transcription that have a transcript, one row per
-- chunk: the job's chunks_done counts a chunk only when its row is new, so a
-- chunk retried on another worker is counted once.
CREATE TABLE job_chunks_done (
    job_id  bigint NOT NULL REFERENCES jobs (id),
    chunk   integer NOT NULL CHECK (chunk >= 0),
    done_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, chunk)
);

--bun:split

-- GET /jobs/running lists an account's SMS batches still sending.
CREATE INDEX sms_batches_running_idx ON sms_batches (account_id) WHERE status IN ('queued', 'processing');
