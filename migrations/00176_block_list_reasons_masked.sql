-- A send refused by a block-list entry of a whole number names the entry masked
-- ("block_list number +447*******56", as pii.Mask makes it), as the audit log names it;
-- versions before wrote the number whole. This rewrites the two places where that reason
-- outlives the person's own rows or is read by every role: the hourly rollups the charts
-- count by reason (kept 400 days, and left by an erasure), merging the counts of numbers that
-- share a mask, and the send.blocked events of the outbox. The refused sends' own rows keep
-- their reason until an erasure of the number deletes them or the history's retention
-- does: rewriting them would read the whole history at start-up.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION otpgate_mask_block_list(p_reason text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN n IS NULL THEN p_reason ELSE 'block_list number ' ||
        CASE WHEN length(n) <= 6 THEN repeat('*', length(n))
            ELSE left(n, 4) || repeat('*', length(n) - 6) || right(n, 2) END END
    FROM (SELECT substring(p_reason FROM '^block_list number (\+[0-9]+)$') AS n) AS m
$$;
-- +goose StatementEnd

CREATE TEMPORARY TABLE otpgate_masked_stats ON COMMIT DROP AS
    SELECT hour, app_id, kind, otpgate_mask_block_list(reason) AS reason, sum(n) AS n
    FROM stats_hourly WHERE reason ~ '^block_list number \+[0-9]+$'
    GROUP BY 1, 2, 3, 4;
DELETE FROM stats_hourly WHERE reason ~ '^block_list number \+[0-9]+$';
INSERT INTO stats_hourly AS s (hour, app_id, kind, reason, n)
    SELECT hour, app_id, kind, reason, n FROM otpgate_masked_stats
    ON CONFLICT (hour, app_id, kind, reason) DO UPDATE SET n = s.n + excluded.n;

UPDATE event_outbox SET data = jsonb_set(data, '{reason}', to_jsonb(otpgate_mask_block_list(data->>'reason')))
    WHERE type = 'send.blocked' AND data->>'reason' ~ '^block_list number \+[0-9]+$';

DROP FUNCTION otpgate_mask_block_list(text);

-- +goose Down
-- The whole numbers are not kept anywhere to be written back; the masked reasons stay.
SELECT 1;
