-- Search: transcripts by their words (full-text), job lists by file name,
-- status and date, SMS messages by number and text, the inbox by number and
-- unread threads. pg_trgm indexes substring matches (ILIKE '%...%');
-- both extensions are trusted ones that PostgreSQL's contrib ships.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
-- btree_gin lets one GIN index hold the account and the words, so a search
-- reads only the postings of its own account.
CREATE EXTENSION IF NOT EXISTS btree_gin;

--bun:split

-- A transcript is indexed in passages of a few seconds of speech: a hit is
-- shown as its passage, and links to the moment its first matching word is
-- said (starts[i] is when words[i] begins). Every passage is indexed with
-- the 'simple' configuration (exact words in any language: Hebrew and
-- Arabic included), and English ones with the 'english' stems too.
CREATE TABLE transcript_passages (
    job_id     bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq        integer NOT NULL,
    account_id text NOT NULL,
    start_sec  double precision NOT NULL,
    end_sec    double precision NOT NULL,
    words      text[] NOT NULL,
    starts     double precision[] NOT NULL,
    text       text NOT NULL,
    stem       regconfig,
    tsv        tsvector GENERATED ALWAYS AS (
                   CASE WHEN stem IS NULL THEN to_tsvector('simple', text)
                        ELSE to_tsvector('simple', text) || to_tsvector(stem, text) END) STORED,
    PRIMARY KEY (job_id, seq)
);
CREATE INDEX transcript_passages_tsv_idx ON transcript_passages USING gin (account_id, tsv);
-- A search reads an account's newest passages first, in job order
-- (storage.Jobs.SearchTranscripts): a common word fills a page there.
CREATE INDEX transcript_passages_job_idx ON transcript_passages (account_id, job_id DESC);

--bun:split

-- index_transcript replaces a job's passages with those of words (the
-- transcript's JSON words: { word, start, end }), in one statement that
-- storage.Jobs.IndexTranscript calls and the backfill below uses. A passage
-- ends at a pause of 1.5 s or more, or after 24 words.
CREATE FUNCTION index_transcript(p_job bigint, p_words jsonb) RETURNS void LANGUAGE sql AS $$
DELETE FROM transcript_passages WHERE job_id = p_job;
WITH w AS (
    SELECT e.ord, btrim(translate(e.w->>'word', U&'\E000\E001', '')) AS word,
           coalesce((e.w->>'start')::float8, 0) AS s, coalesce((e.w->>'end')::float8, 0) AS en
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_words) = 'array' THEN p_words ELSE '[]' END)
         WITH ORDINALITY AS e(w, ord)
    WHERE btrim(translate(e.w->>'word', U&'\E000\E001', '')) <> ''
), breaks AS (
    SELECT *, CASE WHEN s - lag(en) OVER (ORDER BY ord) >= 1.5 THEN 1 ELSE 0 END AS brk FROM w
), runs AS (
    SELECT *, sum(brk) OVER (ORDER BY ord) AS run FROM breaks
), parts AS (
    SELECT *, (row_number() OVER (PARTITION BY run ORDER BY ord) - 1) / 24 AS part FROM runs
)
INSERT INTO transcript_passages (job_id, seq, account_id, start_sec, end_sec, words, starts, text, stem)
SELECT p_job, (row_number() OVER (ORDER BY min(p.ord)) - 1)::integer, j.account_id, min(p.s), max(p.en),
       array_agg(p.word ORDER BY p.ord), array_agg(p.s ORDER BY p.ord), string_agg(p.word, ' ' ORDER BY p.ord),
       CASE WHEN split_part(lower(coalesce(j.language_detected, j.language_requested)), '-', 1) = 'en'
            THEN 'english'::regconfig END
FROM parts p, jobs j
WHERE j.id = p_job
GROUP BY p.run, p.part, j.account_id, j.language_detected, j.language_requested;
$$;

--bun:split

SELECT index_transcript(id, words) FROM jobs WHERE words IS NOT NULL;

--bun:split

-- Job lists filtered by status (in list order), by date, and by a part of
-- the file name.
CREATE INDEX jobs_status_idx ON jobs (account_id, kind, status, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX jobs_created_idx ON jobs (account_id, kind, created_at) WHERE deleted_at IS NULL;
CREATE INDEX jobs_file_name_trgm_idx ON jobs USING gin (file_name gin_trgm_ops) WHERE deleted_at IS NULL;

--bun:split

-- SMS messages by a part of their text or of either number; the inbox by a
-- part of the remote number or the contact's name, and its unread threads.
CREATE INDEX sms_messages_account_idx ON sms_messages (account_id, id DESC);
CREATE INDEX sms_messages_body_trgm_idx ON sms_messages USING gin (body gin_trgm_ops);
CREATE INDEX sms_threads_remote_trgm_idx ON sms_threads USING gin (remote_phone gin_trgm_ops, remote_contact_name gin_trgm_ops);
CREATE INDEX sms_threads_unread_idx ON sms_threads (account_id, last_message_at DESC, id DESC) WHERE unread_count > 0;
