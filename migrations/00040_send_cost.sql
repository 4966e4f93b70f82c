-- Spend: each send's estimated cost (segments × the price table's price) in micro-units of
-- the currency the operator named when it was sent. Refused sends and test numbers' sends
-- cost nothing.

-- +goose Up
ALTER TABLE sends ADD COLUMN cost bigint NOT NULL DEFAULT 0 CHECK (cost >= 0);
ALTER TABLE sends ADD COLUMN currency text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sends DROP COLUMN currency;
ALTER TABLE sends DROP COLUMN cost;
