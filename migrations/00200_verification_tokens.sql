-- Verification tokens (docs/browser.md): the apps' browser settings, the generated signing
-- keys (sealed: AES-256-GCM under a key derived from OTP_SECRET, bound to the key's id) and
-- the redeemed token ids, kept until their token expired.

-- +goose Up
ALTER TABLE apps
    ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}',
    ADD COLUMN token_ttl_ms bigint NOT NULL DEFAULT 600000,
    ADD COLUMN token_address text NOT NULL DEFAULT 'address';

CREATE TABLE token_signing_keys (
    id         text PRIMARY KEY,
    alg        text NOT NULL,
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL,
    active_at  timestamptz NOT NULL
);

CREATE TABLE token_redemptions (
    jti         text PRIMARY KEY,
    app_id      uuid NOT NULL,
    expires_at  timestamptz NOT NULL,
    redeemed_at timestamptz NOT NULL
);
CREATE INDEX token_redemptions_expires_at ON token_redemptions (expires_at);

-- +goose Down
DROP TABLE token_redemptions;
DROP TABLE token_signing_keys;
ALTER TABLE apps DROP COLUMN allowed_origins, DROP COLUMN token_ttl_ms, DROP COLUMN token_address;
