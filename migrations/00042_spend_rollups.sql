-- Spend past OTP_HISTORY_RETENTION: the hourly attempts rollup (the one that keeps app and
-- country) also sums what its sends cost, as the Spend page counts it — priced sends that did
-- not fail, in the micro-units sends.cost holds — and how many such sends there were. Hours
-- rolled up before this migration keep 0: no send was priced before 00040.

-- +goose Up
ALTER TABLE attempts_hourly
    ADD COLUMN cost   bigint NOT NULL DEFAULT 0 CHECK (cost >= 0),
    ADD COLUMN priced bigint NOT NULL DEFAULT 0 CHECK (priced >= 0);

-- +goose Down
ALTER TABLE attempts_hourly DROP COLUMN priced, DROP COLUMN cost;
