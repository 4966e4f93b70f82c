-- Events: webhook endpoints per app and the outbox their deliveries come from. Every event
-- row is written by the statement or transaction that makes the change it reports, one row
-- per subscribed endpoint; otpgate_begin_send (00008) now also writes verification.created
-- for a verification it creates and verification.expired for an expired one it closes.
-- Event ids are derived from what the event reports (otpgate_event_id), so a change written
-- twice cannot make two events, and every endpoint gets the same id for one event.

-- +goose Up
CREATE TABLE webhook_endpoints (
    id            uuid        PRIMARY KEY,
    -- No foreign key: the default app has no row in apps.
    app_id        uuid        NOT NULL,
    url           text        NOT NULL CHECK (url <> ''),
    -- The signing secret, sealed with a key derived from OTP_SECRET (AES-256-GCM).
    secret_sealed bytea       NOT NULL,
    event_types   text[]      NOT NULL CHECK (cardinality(event_types) > 0),
    created_at    timestamptz NOT NULL
);

CREATE INDEX webhook_endpoints_app_idx ON webhook_endpoints (app_id, created_at, id);

CREATE TABLE event_outbox (
    -- Write order.
    id              bigserial   PRIMARY KEY,
    event_id        uuid        NOT NULL,
    endpoint_id     uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    type            text        NOT NULL,
    -- The verification (or fraud block) the event is about; NULL for events in no order.
    subject         uuid,
    -- The event's place among its subject's: what opens it, then its sends, then what
    -- closes it. Events of one subject are delivered by (rank, id).
    rank            smallint    NOT NULL GENERATED ALWAYS AS (CASE type
        WHEN 'verification.created' THEN 0 WHEN 'fraud.block_started' THEN 0
        WHEN 'verification.sent' THEN 1 ELSE 2 END) STORED,
    data            jsonb       NOT NULL,
    created_at      timestamptz NOT NULL,
    status          text        NOT NULL DEFAULT 'pending'
        CONSTRAINT event_outbox_status_check CHECK (status IN ('pending', 'delivered', 'parked')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- When the row may be claimed next: its retry, or the end of a claim's lease.
    next_attempt_at timestamptz NOT NULL,
    last_attempt_at timestamptz,
    -- The receiver's HTTP status at the last attempt; 0 when it gave none.
    last_status     integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    delivered_at    timestamptz,
    -- When an operator asked for it again: its retry window starts anew.
    redelivered_at  timestamptz,
    CONSTRAINT event_outbox_event_endpoint_key UNIQUE (event_id, endpoint_id),
    CONSTRAINT event_outbox_delivered_check CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);

-- What the dispatcher claims, due first.
CREATE INDEX event_outbox_due_idx ON event_outbox (next_attempt_at, id) WHERE status = 'pending';
-- The oldest undelivered event, for the dispatcher's lag.
CREATE INDEX event_outbox_pending_created_idx ON event_outbox (created_at) WHERE status = 'pending';
-- An event waits for the undelivered events of its subject before it at the same endpoint.
CREATE INDEX event_outbox_subject_idx ON event_outbox (endpoint_id, subject, id)
    WHERE status = 'pending' AND subject IS NOT NULL;
-- The console's deliveries of one endpoint, newest first.
CREATE INDEX event_outbox_endpoint_idx ON event_outbox (endpoint_id, id DESC);
-- For the history retention: delivered and parked events, oldest first.
CREATE INDEX event_outbox_settled_idx ON event_outbox (created_at) WHERE status <> 'pending';

-- When a fraud block's end was reported (lifted, or run out and found by the expiry job);
-- blocks that ended before events existed count as reported.
ALTER TABLE fraud_blocks ADD COLUMN end_reported_at timestamptz;
UPDATE fraud_blocks SET end_reported_at = coalesce(lifted_at, ends_at) WHERE lifted_at IS NOT NULL OR ends_at <= now();
CREATE INDEX fraud_blocks_unreported_idx ON fraud_blocks (ends_at) WHERE end_reported_at IS NULL;

-- +goose StatementBegin
-- otpgate_event_id is the id of the event of type p_type about p_key: the same change always
-- gets the same id, which receivers deduplicate by.
CREATE FUNCTION otpgate_event_id(p_type text, p_key uuid) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT md5(p_type || ':' || p_key::text)::uuid $$;
-- +goose StatementEnd

-- +goose StatementBegin
-- otpgate_ts writes a time as the events' JSON does: RFC 3339 in UTC with microseconds.
CREATE FUNCTION otpgate_ts(p timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT to_char(p AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION otpgate_begin_send(
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION otpgate_begin_send(
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

DROP FUNCTION otpgate_ts(timestamptz);
DROP FUNCTION otpgate_event_id(text, uuid);
DROP INDEX fraud_blocks_unreported_idx;
ALTER TABLE fraud_blocks DROP COLUMN end_reported_at;
DROP TABLE event_outbox;
DROP TABLE webhook_endpoints;
