-- Operator accounts, their roles and their personal admin API tokens. The shared
-- ADMIN_TOKEN stays outside: it is the break-glass login and has no row.

-- +goose Up
CREATE TABLE operators (
    id                uuid        PRIMARY KEY,
    email             text        NOT NULL UNIQUE CHECK (email <> '' AND email = lower(email)),
    -- The identity provider's subject, set at the first single sign-on.
    subject           text        UNIQUE CHECK (subject <> ''),
    name              text        NOT NULL DEFAULT '',
    role              text        NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    -- An admin set the role in the console: sign-in claims no longer change it.
    role_from_console boolean     NOT NULL DEFAULT false,
    disabled          boolean     NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    last_seen_at      timestamptz
);

CREATE TABLE operator_tokens (
    id            text        PRIMARY KEY,
    operator_id   uuid        NOT NULL REFERENCES operators (id),
    name          text        NOT NULL DEFAULT '',
    secret_sha256 bytea       NOT NULL UNIQUE CHECK (length(secret_sha256) = 32),
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    last_used_at  timestamptz
);

CREATE INDEX operator_tokens_operator_idx ON operator_tokens (operator_id, created_at, id);

-- +goose Down
DROP TABLE operator_tokens;
DROP TABLE operators;
