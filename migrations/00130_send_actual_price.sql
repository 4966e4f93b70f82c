-- Spend: what the provider reported a send actually cost (Twilio's Price and PriceUnit in
-- its status callback), beside the estimate of 00040, in micro-units of the provider's
-- currency, which may differ from the price table's. Empty currency: none reported. Set
-- once, by the first receipt that carries a price.

-- +goose Up
ALTER TABLE sends ADD COLUMN actual_cost bigint NOT NULL DEFAULT 0 CHECK (actual_cost >= 0);
ALTER TABLE sends ADD COLUMN actual_currency text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sends DROP COLUMN actual_currency;
ALTER TABLE sends DROP COLUMN actual_cost;
