-- A fraud block's reason names the send that tripped it by the number's mask (pii.Mask: its
-- first four and last two characters, a star for each one between), never the whole number.
-- Versions before wrote it whole ("…; tripped by a send to +819012345678 from 203.0.113.7")
-- in three places: the block's reason, the detail of its fraud_block_started audit entry and
-- the reason of its fraud.block_started and fraud.block_ended events. This rewrites them as
-- the guard now writes them. Only those exact words are matched, so a reason already masked
-- (or naming no send) is left as it is, and applying this again changes nothing. The three
-- are the guard's blocks, the audit log and the fraud events of the outbox: small tables
-- next to the history, read once.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION otpgate_mask_tripped_by(p_text text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN n IS NULL THEN p_text ELSE replace(p_text,
        'tripped by a send to ' || n || ' from ',
        'tripped by a send to ' || CASE WHEN length(n) <= 6 THEN repeat('*', length(n))
            ELSE left(n, 4) || repeat('*', length(n) - 6) || right(n, 2) END || ' from ') END
    FROM (SELECT substring(p_text FROM 'tripped by a send to (\+[0-9]+) from ') AS n) AS m
$$;
-- +goose StatementEnd

UPDATE fraud_blocks SET reason = otpgate_mask_tripped_by(reason)
    WHERE reason ~ 'tripped by a send to \+[0-9]+ from ';
UPDATE admin_actions SET detail = otpgate_mask_tripped_by(detail)
    WHERE action = 'fraud_block_started' AND detail ~ 'tripped by a send to \+[0-9]+ from ';
UPDATE event_outbox SET data = jsonb_set(data, '{reason}', to_jsonb(otpgate_mask_tripped_by(data->>'reason')))
    WHERE type IN ('fraud.block_started', 'fraud.block_ended')
      AND data->>'reason' ~ 'tripped by a send to \+[0-9]+ from ';

DROP FUNCTION otpgate_mask_tripped_by(text);

-- +goose Down
-- The whole numbers are not kept anywhere to be written back; the masked reasons stay.
SELECT 1;
