-- Channels, routing and delivery: what a send went out on, the provider attempts it
-- took, the SMS's encoding, and the delivery receipt that settled it.
-- Every new column has a constant default, so adding it rewrites no rows.

-- +goose Up
ALTER TABLE sends
    ADD COLUMN channel        text        NOT NULL DEFAULT 'sms',
    -- The ISO region of a phone number (empty for email), for delivery rates per country.
    ADD COLUMN country        text        NOT NULL DEFAULT '',
    -- Every provider attempt: [{"provider","outcome","provider_id","error","start","duration_ms"}].
    ADD COLUMN attempts       jsonb       NOT NULL DEFAULT '[]',
    -- An SMS's encoding (GSM-7 or UCS-2) and segment count; empty and 0 otherwise.
    ADD COLUMN encoding       text        NOT NULL DEFAULT '',
    ADD COLUMN segments       integer     NOT NULL DEFAULT 0 CHECK (segments >= 0),
    -- The delivery receipt: set once, never changed after.
    ADD COLUMN delivery       text        NOT NULL DEFAULT ''
        CONSTRAINT sends_delivery_check CHECK (delivery IN ('', 'delivered', 'undelivered')),
    ADD COLUMN delivery_error text        NOT NULL DEFAULT '',
    ADD COLUMN delivered_at   timestamptz;

-- Receipts name a send by its provider and the provider's message id.
CREATE INDEX sends_provider_message_idx ON sends (provider, provider_message_id) WHERE provider_message_id <> '';

-- +goose Down
DROP INDEX sends_provider_message_idx;
ALTER TABLE sends
    DROP COLUMN delivered_at,
    DROP COLUMN delivery_error,
    DROP COLUMN delivery,
    DROP COLUMN segments,
    DROP COLUMN encoding,
    DROP COLUMN attempts,
    DROP COLUMN country,
    DROP COLUMN channel;
