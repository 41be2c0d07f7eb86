-- The language the web console speaks to an account, chosen in its
-- language menu; NULL until chosen, when the console speaks the account's
-- locale. The REST API's messages stay in the account's locale.
ALTER TABLE accounts
    ADD COLUMN console_locale text CHECK (console_locale IN ('en', 'he', 'ar'));
