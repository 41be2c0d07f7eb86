DROP INDEX sms_batches_account_idx;
