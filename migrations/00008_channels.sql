-- Channels and app message settings wired into the send: otpgate_begin_send (00007) also
-- writes the send's channel, the number's country and the SMS's encoding and segment count
-- (the columns of 00006), and apps keep their message templates, WebOTP domain and Android
-- SMS Retriever hash.

-- +goose Up
ALTER TABLE apps
    -- {"<locale>": {"sms","voice","email_subject","email_text","email_html"}}; absent keys
    -- keep the built-in templates.
    ADD COLUMN templates        jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN webotp_domain    text  NOT NULL DEFAULT '',
    ADD COLUMN android_app_hash text  NOT NULL DEFAULT '';

DROP FUNCTION otpgate_begin_send(uuid, text, text, text, text, text, timestamptz, timestamptz, integer, integer,
    uuid, bytea, uuid, bytea, uuid, text);

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
DROP FUNCTION otpgate_begin_send(uuid, text, text, text, text, text, timestamptz, timestamptz, integer, integer,
    uuid, bytea, uuid, bytea, uuid, text, text, text, integer);

-- +goose StatementBegin
CREATE FUNCTION otpgate_begin_send(
    p_app_id uuid, p_phone text, p_channel text, p_locale text, p_client_ip text, p_provider text,
    p_now timestamptz, p_expires_at timestamptz, p_max_sends integer, p_max_attempts integer,
    p_new_id uuid, p_new_hash bytea, p_known_id uuid, p_known_hash bytea, p_send_id uuid, p_shadow text)
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
            END IF;
            -- Not found: the pending one closed since the insert met it; try again.
        END IF;
        IF result IS NOT NULL THEN
            IF result IN ('created', 'counted') THEN
                INSERT INTO sends (id, verification_id, phone, client_ip, status, provider, created_at, updated_at, app_id, shadow)
                    VALUES (p_send_id, v.id, p_phone, p_client_ip, 'sending', p_provider, p_now, p_now, p_app_id, p_shadow);
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


ALTER TABLE apps DROP COLUMN android_app_hash, DROP COLUMN webotp_domain, DROP COLUMN templates;
