-- Per-sender pacing (docs/decisions.md, "SMS pacing"): an owned number may
-- carry the most messages a second its carrier lets it send (NULL: no
-- limit). Every batch and process sending from it takes its turn from the
-- number's row: next_send_at is the earliest time the next send may go,
-- moved on by one step per send in one atomic UPDATE; slowed_until, set by
-- a carrier 429, halves the pace until it passes; pace_epoch moves on with
-- every change of pace, voiding the turns that sends still hold.
ALTER TABLE owned_numbers
    ADD COLUMN messages_per_second integer CHECK (messages_per_second BETWEEN 1 AND 1000),
    ADD COLUMN next_send_at timestamptz,
    ADD COLUMN slowed_until timestamptz,
    ADD COLUMN pace_epoch bigint NOT NULL DEFAULT 0;
