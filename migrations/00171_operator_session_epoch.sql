-- A console session holds the epoch of its account it began in; signing out moves the
-- epoch on, which voids every session of the account on every instance at once.

-- +goose Up
ALTER TABLE operators ADD COLUMN session_epoch bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE operators DROP COLUMN session_epoch;
