-- An account's notification preferences: whether a job created in the web
-- console e-mails (default_email_after) and texts (default_sms_after) the
-- owner when it ends, unless the form says otherwise. They are the console
-- forms' defaults; the job keeps its own email_after / sms_after, and jobs
-- created through the API ask per call (push only by default).
--
-- Texts go to a verified phone only: the SMS preference is on only while
-- the phone is verified (a new phone clears it, service/accounts).
ALTER TABLE accounts
    ADD COLUMN default_email_after boolean NOT NULL DEFAULT false,
    ADD COLUMN default_sms_after   boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT accounts_default_sms_after_verified CHECK (NOT default_sms_after OR phone_verified);
