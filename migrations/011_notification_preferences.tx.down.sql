ALTER TABLE accounts
    DROP CONSTRAINT accounts_default_sms_after_verified,
    DROP COLUMN default_email_after,
    DROP COLUMN default_sms_after;
