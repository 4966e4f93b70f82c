-- Sends in one round trip, the status of sends whose outcome was never recorded, and room
-- for cheap updates of verifications.
--
-- otpgate_begin_send does what a send must write before its SMS goes out (count it on the
-- phone's pending verification or create one, and write the send row as 'sending') in one
-- statement, so the service needs one round trip, in autocommit, instead of a transaction of
-- five. 'unknown' is the status the sweeper gives a send left 'sending' by a server that
-- stopped before it could record how the send ended.

-- +goose NO TRANSACTION

-- +goose Up
-- NOT VALID keeps the swap to a moment's lock; the validation then scans the table while
-- writes go on. Every old row fits the wider check.
ALTER TABLE sends DROP CONSTRAINT sends_status_check,
    ADD CONSTRAINT sends_status_check
        CHECK (status IN ('sending', 'sent', 'failed', 'blocked', 'duplicate', 'unknown')) NOT VALID;
ALTER TABLE sends VALIDATE CONSTRAINT sends_status_check;

-- A wrong guess or a resend changes no indexed column of its verification; with room left on
-- its page the new row version stays there (a HOT update) and no index is written. New pages
-- are filled to 70 %.
ALTER TABLE verifications SET (fillfactor = 70);

-- otpgate_begin_send counts one send for p_phone. When the phone has no pending verification
-- it creates one, p_new_id with p_new_hash; else it locks the pending one and, while it is
-- unexpired, counts the send on it, when p_known_id names it (p_known_hash is then its code
-- hash), or closes it as expired and creates the new one. It writes the send row p_send_id as 'sending' and answers one row: outcome
-- and the verification as it is now, its columns in the order the store reads them.
--   created  a new verification was created for this send
--   counted  the send was counted on the pending verification p_known_id
--   hash     the phone has a pending verification other than p_known_id; nothing was written,
--            call again with its id and the code hash for it
--   budget   the pending verification already had p_max_sends sends; nothing was written
-- Two creators racing for one phone meet at the unique index of pending phones: the loser
-- inserts nothing and locks the winner's row.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION otpgate_begin_send(
    p_phone text, p_channel text, p_locale text, p_client_ip text, p_provider text,
    p_now timestamptz, p_expires_at timestamptz, p_max_sends integer, p_max_attempts integer,
    p_new_id uuid, p_new_hash bytea, p_known_id uuid, p_known_hash bytea, p_send_id uuid)
RETURNS TABLE (outcome text, id uuid, phone text, channel text, locale text, status text,
    code_hashes bytea[], sends integer, attempts integer, max_attempts integer, client_ip text,
    created_at timestamptz, expires_at timestamptz, closed_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v verifications%ROWTYPE;
    result text;
BEGIN
    FOR turn IN 1..5 LOOP
        -- Most sends are a phone's first: try to create its verification before looking.
        INSERT INTO verifications AS t
            (id, phone, channel, locale, status, code_hashes, sends, max_attempts, client_ip, created_at, expires_at)
            VALUES (p_new_id, p_phone, p_channel, p_locale, 'pending', ARRAY[p_new_hash], 1, p_max_attempts,
                p_client_ip, p_now, p_expires_at)
            ON CONFLICT (phone) WHERE status = 'pending' DO NOTHING
            RETURNING * INTO v;
        IF FOUND THEN
            result := 'created';
        ELSE
            SELECT * INTO v FROM verifications t
                WHERE t.phone = p_phone AND t.status = 'pending' FOR UPDATE;
            IF FOUND AND p_now < v.expires_at THEN
                IF v.sends >= p_max_sends THEN
                    result := 'budget';
                ELSIF p_known_id IS DISTINCT FROM v.id THEN
                    result := 'hash';
                ELSE
                    UPDATE verifications t
                        SET sends = t.sends + 1, expires_at = p_expires_at,
                            code_hashes = array_append(t.code_hashes, p_known_hash)
                        WHERE t.id = v.id
                        RETURNING * INTO v;
                    result := 'counted';
                END IF;
            ELSIF FOUND THEN
                -- Expired: close it, and create the new one on the next turn.
                UPDATE verifications t SET status = 'expired', closed_at = p_now WHERE t.id = v.id;
            END IF;
            -- Not found: the pending one closed since the insert met it; try again.
        END IF;
        IF result IS NOT NULL THEN
            IF result IN ('created', 'counted') THEN
                INSERT INTO sends (id, verification_id, phone, client_ip, status, provider, created_at, updated_at)
                    VALUES (p_send_id, v.id, p_phone, p_client_ip, 'sending', p_provider, p_now, p_now);
            END IF;
            RETURN QUERY SELECT result, v.id, v.phone, v.channel, v.locale, v.status, v.code_hashes, v.sends,
                v.attempts, v.max_attempts, v.client_ip, v.created_at, v.expires_at, v.closed_at;
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'the pending verification of one phone kept changing';
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE verifications RESET (fillfactor);
DROP FUNCTION otpgate_begin_send(text, text, text, text, text, timestamptz, timestamptz, integer, integer,
    uuid, bytea, uuid, bytea, uuid);
ALTER TABLE sends DROP CONSTRAINT sends_status_check,
    ADD CONSTRAINT sends_status_check
        CHECK (status IN ('sending', 'sent', 'failed', 'blocked', 'duplicate')) NOT VALID;
