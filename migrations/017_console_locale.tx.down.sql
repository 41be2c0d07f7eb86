ALTER TABLE accounts DROP COLUMN console_locale;
