ALTER TABLE sms_messages DROP COLUMN send_lease_until;
