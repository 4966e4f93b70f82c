-- The states of single sign-ons that came back to the console, so each is finished once:
-- a copied login cookie and state cannot be replayed with a fresh code. Only SHA-256 of
-- the state is kept, until the sign-in's cookie expires; later inserts drop expired rows.

-- +goose Up
CREATE TABLE oidc_login_states (
    state_sha256 bytea       PRIMARY KEY CHECK (length(state_sha256) = 32),
    expires_at   timestamptz NOT NULL
);

CREATE INDEX oidc_login_states_expires_idx ON oidc_login_states (expires_at);

-- +goose Down
DROP TABLE oidc_login_states;
