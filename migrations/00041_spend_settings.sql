-- Spend: the live price table and budgets, as one JSON document every instance polls by
-- its version, as the fraud settings are.

-- +goose Up
CREATE TABLE spend_settings (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    -- Bumped by every change; every instance polls it.
    version    bigint      NOT NULL DEFAULT 0,
    -- The configuration (currency, prices, budgets); NULL until an operator first changes
    -- it, when the shipped defaults apply.
    config     jsonb,
    updated_at timestamptz
);
INSERT INTO spend_settings (id) VALUES (true);

-- +goose Down
DROP TABLE spend_settings;
