-- A send writes its row whole: otpgate_begin_send (00110) takes the send's fraud explanation,
-- test mark, estimated cost and currency, and the payment its code confirms (PSD2), which the
-- server wrote with a second statement after it, an update of the fresh send row (and of its
-- verification for a payment). With the fraud guard on, as by default, nearly every allowed
-- send carries an explanation and a cost, so that was one more row version of every send.
--
-- The function of 00110 stays (PostgreSQL tells them apart by their arguments), so that
-- instances of the earlier version keep sending while the others are upgraded.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION otpgate_begin_send(
    p_app_id uuid, p_phone text, p_channel text, p_locale text, p_client_ip text, p_provider text,
    p_now timestamptz, p_expires_at timestamptz, p_max_sends integer, p_max_attempts integer,
    p_new_id uuid, p_new_hash bytea, p_known_id uuid, p_known_hash bytea, p_send_id uuid, p_shadow text,
    p_country text, p_encoding text, p_segments integer, p_phone_sealed text, p_phone_prefix text,
    p_fraud jsonb, p_test boolean, p_cost bigint, p_currency text, p_amount text, p_payee text)
RETURNS TABLE (outcome text, id uuid, phone text, channel text, locale text, status text,
    code_hashes bytea[], sends integer, attempts integer, max_attempts integer, client_ip text,
    created_at timestamptz, expires_at timestamptz, closed_at timestamptz, app_id uuid)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v verifications%ROWTYPE;
    result text;
BEGIN
    FOR turn IN 1..5 LOOP
        -- Most sends are a phone's first: try to create its verification before looking.
        INSERT INTO verifications AS t
            (id, phone, channel, locale, status, code_hashes, sends, max_attempts, client_ip, created_at, expires_at, app_id,
                phone_sealed, phone_prefix, amount, payee)
            VALUES (p_new_id, p_phone, p_channel, p_locale, 'pending', ARRAY[p_new_hash], 1, p_max_attempts,
                p_client_ip, p_now, p_expires_at, p_app_id, p_phone_sealed, p_phone_prefix, p_amount, p_payee)
            ON CONFLICT (app_id, phone) WHERE status = 'pending' DO NOTHING
            RETURNING * INTO v;
        IF FOUND THEN
            result := 'created';
        ELSE
            SELECT * INTO v FROM verifications t
                WHERE t.app_id = p_app_id AND t.phone = p_phone AND t.status = 'pending' FOR UPDATE;
            IF FOUND AND p_now < v.expires_at THEN
                IF v.sends >= p_max_sends THEN
                    result := 'budget';
                ELSIF p_known_id IS DISTINCT FROM v.id THEN
                    result := 'hash';
                ELSE
                    UPDATE verifications t
                        SET sends = t.sends + 1, expires_at = p_expires_at,
                            code_hashes = array_append(t.code_hashes, p_known_hash),
                            -- A resend for a transaction names the payment its code confirms.
                            amount = CASE WHEN p_amount IS NULL THEN t.amount ELSE p_amount END,
                            payee = CASE WHEN p_amount IS NULL THEN t.payee ELSE p_payee END
                        WHERE t.id = v.id
                        RETURNING * INTO v;
                    result := 'counted';
                END IF;
            ELSIF FOUND THEN
                -- Expired: close it, and create the new one on the next turn.
                UPDATE verifications t SET status = 'expired', closed_at = p_now WHERE t.id = v.id;
                INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
                    SELECT otpgate_event_id('verification.expired', v.id), w.id, 'verification.expired', v.id,
                        jsonb_build_object('verification_id', v.id, 'app_id', v.app_id, 'channel', v.channel, 'to', coalesce(nullif(v.phone_sealed, ''), v.phone),
                            'status', 'expired', 'sends', v.sends, 'attempts', v.attempts, 'expires_at', otpgate_ts(v.expires_at)),
                        p_now, p_now
                    FROM webhook_endpoints w WHERE w.app_id = v.app_id AND 'verification.expired' = ANY(w.event_types)
                    ON CONFLICT DO NOTHING;
            END IF;
            -- Not found: the pending one closed since the insert met it; try again.
        END IF;
        IF result IS NOT NULL THEN
            IF result IN ('created', 'counted') THEN
                INSERT INTO sends (id, verification_id, phone, client_ip, status, provider, created_at, updated_at, app_id, shadow,
                        channel, country, encoding, segments, phone_sealed, phone_prefix, fraud, test, cost, currency)
                    VALUES (p_send_id, v.id, p_phone, p_client_ip, 'sending', p_provider, p_now, p_now, p_app_id, p_shadow,
                        p_channel, p_country, p_encoding, p_segments, p_phone_sealed, p_phone_prefix, p_fraud, p_test, p_cost, p_currency);
            END IF;
            IF result = 'created' THEN
                -- Only apps with a subscribed endpoint get a row; for the others this is one
                -- probe of webhook_endpoints_app_idx.
                INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
                    SELECT otpgate_event_id('verification.created', v.id), w.id, 'verification.created', v.id,
                        jsonb_build_object('verification_id', v.id, 'app_id', v.app_id, 'channel', v.channel, 'to', coalesce(nullif(v.phone_sealed, ''), v.phone),
                            'status', v.status, 'sends', v.sends, 'attempts', v.attempts, 'expires_at', otpgate_ts(v.expires_at),
                            'send_id', p_send_id),
                        p_now, p_now
                    FROM webhook_endpoints w WHERE w.app_id = p_app_id AND 'verification.created' = ANY(w.event_types)
                    ON CONFLICT DO NOTHING;
            END IF;
            RETURN QUERY SELECT result, v.id, v.phone, v.channel, v.locale, v.status, v.code_hashes, v.sends,
                v.attempts, v.max_attempts, v.client_ip, v.created_at, v.expires_at, v.closed_at, v.app_id;
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'the pending verification of one phone kept changing';
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION otpgate_begin_send(uuid, text, text, text, text, text, timestamptz, timestamptz, integer, integer, uuid, bytea, uuid, bytea, uuid, text, text, text, integer, text, text,
    jsonb, boolean, bigint, text, text, text);
