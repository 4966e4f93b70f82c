-- Personal data at rest (docs/privacy.md): no phone number or email address is stored in
-- plain. verifications.phone and sends.phone keep what they are compared by, now the
-- address's keyed index (HMAC-SHA-256, "h1.…"), so the unique index of pending
-- verifications, the lookups and the joins work as before; phone_sealed keeps the address
-- sealed under the current data key (AES-256-GCM, "<key id>.…"), which reads open; and
-- phone_prefix keeps a phone number without its last four digits for the counts by prefix
-- (fraud conversion, spend, attempts summary). Event payloads carry the sealed address
-- in "to". Rows written before this migration keep their plain address until the
-- server's re-sealing job converts them (it converts the pending verifications before the
-- server takes requests). ADD COLUMN with a constant default rewrites nothing and works
-- on partitioned tables alike.
--
-- otpgate_begin_send (00010) now takes the index as p_phone and the sealed address and
-- prefix as two more arguments, so its old signature goes first.

-- +goose Up
ALTER TABLE verifications
    ADD COLUMN phone_sealed text NOT NULL DEFAULT '',
    ADD COLUMN phone_prefix text NOT NULL DEFAULT '';
ALTER TABLE sends
    ADD COLUMN phone_sealed text NOT NULL DEFAULT '',
    ADD COLUMN phone_prefix text NOT NULL DEFAULT '';

DROP FUNCTION otpgate_begin_send(uuid, text, text, text, text, text, timestamptz, timestamptz, integer, integer, uuid, bytea, uuid, bytea, uuid, text, text, text, integer);

-- +goose StatementBegin
CREATE FUNCTION otpgate_begin_send(
    p_app_id uuid, p_phone text, p_channel text, p_locale text, p_client_ip text, p_provider text,
    p_now timestamptz, p_expires_at timestamptz, p_max_sends integer, p_max_attempts integer,
    p_new_id uuid, p_new_hash bytea, p_known_id uuid, p_known_hash bytea, p_send_id uuid, p_shadow text,
    p_country text, p_encoding text, p_segments integer, p_phone_sealed text, p_phone_prefix text)
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
                phone_sealed, phone_prefix)
            VALUES (p_new_id, p_phone, p_channel, p_locale, 'pending', ARRAY[p_new_hash], 1, p_max_attempts,
                p_client_ip, p_now, p_expires_at, p_app_id, p_phone_sealed, p_phone_prefix)
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
                            code_hashes = array_append(t.code_hashes, p_known_hash)
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
                        channel, country, encoding, segments, phone_sealed, phone_prefix)
                    VALUES (p_send_id, v.id, p_phone, p_client_ip, 'sending', p_provider, p_now, p_now, p_app_id, p_shadow,
                        p_channel, p_country, p_encoding, p_segments, p_phone_sealed, p_phone_prefix);
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
DROP FUNCTION otpgate_begin_send(uuid, text, text, text, text, text, timestamptz, timestamptz, integer, integer, uuid, bytea, uuid, bytea, uuid, text, text, text, integer, text, text);
-- +goose StatementBegin
CREATE FUNCTION otpgate_begin_send(
    p_app_id uuid, p_phone text, p_channel text, p_locale text, p_client_ip text, p_provider text,
    p_now timestamptz, p_expires_at timestamptz, p_max_sends integer, p_max_attempts integer,
    p_new_id uuid, p_new_hash bytea, p_known_id uuid, p_known_hash bytea, p_send_id uuid, p_shadow text,
    p_country text, p_encoding text, p_segments integer)
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
            (id, phone, channel, locale, status, code_hashes, sends, max_attempts, client_ip, created_at, expires_at, app_id)
            VALUES (p_new_id, p_phone, p_channel, p_locale, 'pending', ARRAY[p_new_hash], 1, p_max_attempts,
                p_client_ip, p_now, p_expires_at, p_app_id)
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
                            code_hashes = array_append(t.code_hashes, p_known_hash)
                        WHERE t.id = v.id
                        RETURNING * INTO v;
                    result := 'counted';
                END IF;
            ELSIF FOUND THEN
                -- Expired: close it, and create the new one on the next turn.
                UPDATE verifications t SET status = 'expired', closed_at = p_now WHERE t.id = v.id;
                INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
                    SELECT otpgate_event_id('verification.expired', v.id), w.id, 'verification.expired', v.id,
                        jsonb_build_object('verification_id', v.id, 'app_id', v.app_id, 'channel', v.channel, 'to', v.phone,
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
                        channel, country, encoding, segments)
                    VALUES (p_send_id, v.id, p_phone, p_client_ip, 'sending', p_provider, p_now, p_now, p_app_id, p_shadow,
                        p_channel, p_country, p_encoding, p_segments);
            END IF;
            IF result = 'created' THEN
                -- Only apps with a subscribed endpoint get a row; for the others this is one
                -- probe of webhook_endpoints_app_idx.
                INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
                    SELECT otpgate_event_id('verification.created', v.id), w.id, 'verification.created', v.id,
                        jsonb_build_object('verification_id', v.id, 'app_id', v.app_id, 'channel', v.channel, 'to', v.phone,
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
ALTER TABLE sends DROP COLUMN phone_prefix, DROP COLUMN phone_sealed;
ALTER TABLE verifications DROP COLUMN phone_prefix, DROP COLUMN phone_sealed;
