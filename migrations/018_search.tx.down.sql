DROP INDEX sms_threads_unread_idx;
DROP INDEX sms_threads_remote_trgm_idx;
DROP INDEX sms_messages_body_trgm_idx;
DROP INDEX sms_messages_account_idx;
DROP INDEX jobs_file_name_trgm_idx;
DROP INDEX jobs_created_idx;
DROP INDEX jobs_status_idx;
DROP FUNCTION index_transcript(bigint, jsonb);
DROP TABLE transcript_passages;
