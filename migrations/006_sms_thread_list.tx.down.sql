DROP INDEX sms_threads_archived_idx;

--bun:split

DROP INDEX sms_threads_listed_idx;

--bun:split

CREATE INDEX sms_threads_list_idx ON sms_threads (account_id, (archived_at IS NOT NULL), last_message_at DESC, id DESC);
