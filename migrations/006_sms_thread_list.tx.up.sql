-- GET /sms/threads: one partial index for the listed threads and one for the
-- archived ones, each in list order. The planner turns the list's filter
-- into `archived_at IS NULL` (or IS NOT NULL), which an index on the
-- expression (archived_at IS NOT NULL) does not match; these do, so a page
-- is read in order and stops at its limit instead of sorting every thread.
DROP INDEX sms_threads_list_idx;

--bun:split

CREATE INDEX sms_threads_listed_idx ON sms_threads (account_id, last_message_at DESC, id DESC) WHERE archived_at IS NULL;

--bun:split

CREATE INDEX sms_threads_archived_idx ON sms_threads (account_id, last_message_at DESC, id DESC) WHERE archived_at IS NOT NULL;
