-- One attempt at a time hands a message to the carrier: an attempt takes a
-- lease until its own deadline, and another attempt (a retry scheduled while
-- the first still runs on a worker that Temporal lost sight of, or a batch
-- part replayed on another worker) waits for it to end or expire before it
-- looks the message up at the carrier and sends. Without it both could find
-- nothing at the carrier and both send.
ALTER TABLE sms_messages ADD COLUMN send_lease_until timestamptz;
