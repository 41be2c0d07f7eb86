ALTER TABLE owned_numbers
    DROP COLUMN pace_epoch,
    DROP COLUMN slowed_until,
    DROP COLUMN next_send_at,
    DROP COLUMN messages_per_second;
