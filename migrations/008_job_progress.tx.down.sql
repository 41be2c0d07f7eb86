DROP INDEX sms_batches_running_idx;

--bun:split

DROP TABLE job_chunks_done;

--bun:split

ALTER TABLE jobs
    DROP COLUMN progress_stage,
    DROP COLUMN progress_fraction,
    DROP COLUMN progress_attempt,
    DROP COLUMN progress_chunks,
    DROP COLUMN progress_chunks_done,
    DROP COLUMN progress_updated_at;
