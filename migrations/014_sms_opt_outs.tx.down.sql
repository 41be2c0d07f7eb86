DROP TABLE sms_reply_texts;
DROP TABLE sms_keywords;
DROP TABLE sms_opt_out_changes;
DROP TABLE sms_opt_outs;
DELETE FROM sms_messages WHERE kind = 'auto';
UPDATE sms_messages SET status = 'failed' WHERE status = 'opted_out';
ALTER TABLE sms_messages
    DROP CONSTRAINT sms_messages_status_check,
    ADD CONSTRAINT sms_messages_status_check
        CHECK (status IN ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'received')),
    DROP COLUMN reply_to,
    DROP COLUMN keyword,
    DROP COLUMN kind;
