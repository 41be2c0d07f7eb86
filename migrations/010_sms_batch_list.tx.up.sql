-- An account's batches, newest first (the console's list of sends).
CREATE INDEX sms_batches_account_idx ON sms_batches (account_id, id);
