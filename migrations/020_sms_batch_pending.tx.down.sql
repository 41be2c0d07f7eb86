-- The batches still pending become message rows first, as their
-- workflows would have made them (storage's expandBatch), so that no
-- admitted recipient is lost.
INSERT INTO sms_threads (account_id, owned_number_id, remote_phone, last_message_at)
SELECT DISTINCT p.account_id, p.owned_number_id, r.to_phone, p.created_at
FROM sms_batch_pending p CROSS JOIN LATERAL unnest(p.to_phones) AS r(to_phone)
ON CONFLICT (owned_number_id, remote_phone) DO NOTHING;

--bun:split

INSERT INTO sms_messages (id, account_id, thread_id, batch_id, direction, from_phone, to_phone, country,
    body, segments, encoding, status, error_code, error_message, price_micros, cost_micros, created_at, send_at)
SELECT r.id, p.account_id, t.id, p.batch_id, 'outbound', p.from_phone, r.to_phone, r.country,
    r.body, r.segments, r.encoding, r.status, nullif(r.error_code, ''), nullif(r.error_message, ''), r.price, r.cost,
    p.created_at, p.send_at
FROM sms_batch_pending p
CROSS JOIN LATERAL unnest(p.ids, p.to_phones, p.countries, p.bodies, p.segments, p.encodings, p.statuses,
    p.error_codes, p.error_messages, p.prices, p.costs)
    AS r(id, to_phone, country, body, segments, encoding, status, error_code, error_message, price, cost)
JOIN sms_threads t ON t.owned_number_id = p.owned_number_id AND t.remote_phone = r.to_phone;

--bun:split

DROP TABLE sms_batch_pending;
