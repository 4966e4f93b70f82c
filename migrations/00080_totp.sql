-- TOTP (authenticator-app codes): an app's entities (its users, by the identity the app
-- gives them), their factors (a secret each, sealed with a key from OTP_SECRET and bound
-- to the factor's id, never in plain) and the challenges that decided their codes.

-- +goose Up
CREATE TABLE totp_entities (
    id         uuid        PRIMARY KEY,
    -- No foreign key: the default app has no app row to point at.
    app_id     uuid        NOT NULL,
    identity   text        NOT NULL CHECK (identity ~ '^[A-Za-z0-9-]{8,64}$'),
    created_at timestamptz NOT NULL,
    UNIQUE (app_id, identity)
);

CREATE TABLE totp_factors (
    id            uuid        PRIMARY KEY,
    app_id        uuid        NOT NULL,
    entity_id     uuid        NOT NULL REFERENCES totp_entities (id) ON DELETE CASCADE,
    friendly_name text        NOT NULL CHECK (friendly_name <> ''),
    status        text        NOT NULL CHECK (status IN ('unverified', 'verified')),
    alg           text        NOT NULL CHECK (alg IN ('sha1', 'sha256', 'sha512')),
    digits        smallint    NOT NULL CHECK (digits BETWEEN 3 AND 8),
    period        smallint    NOT NULL CHECK (period BETWEEN 20 AND 60),
    skew          smallint    NOT NULL CHECK (skew BETWEEN 0 AND 2),
    -- AES-256-GCM of the secret, bound to the row's id.
    secret_sealed bytea       NOT NULL,
    -- The last time step a code was accepted for: a code is accepted only above it, so
    -- none is accepted twice.
    last_step     bigint      NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX totp_factors_entity_idx ON totp_factors (entity_id, created_at);

CREATE TABLE totp_challenges (
    id         uuid        PRIMARY KEY,
    app_id     uuid        NOT NULL,
    entity_id  uuid        NOT NULL REFERENCES totp_entities (id) ON DELETE CASCADE,
    factor_id  uuid        NOT NULL REFERENCES totp_factors (id) ON DELETE CASCADE,
    status     text        NOT NULL CHECK (status IN ('approved', 'denied')),
    created_at timestamptz NOT NULL
);
CREATE INDEX totp_challenges_entity_idx ON totp_challenges (entity_id, created_at DESC);
CREATE INDEX totp_challenges_factor_idx ON totp_challenges (factor_id);

-- +goose Down
DROP TABLE totp_challenges;
DROP TABLE totp_factors;
DROP TABLE totp_entities;
