-- A check by phone that finds no pending verification reads the verification of the address's
-- newest send that has one (00140). Through the address index of sends it walked past every
-- refused send of the address first: thousands for a number someone pumped. This index holds
-- only the sends of verifications, in each day's partition, so that read is one probe a day.

-- +goose Up
CREATE INDEX sends_verified_address_idx ON sends (app_id, phone, created_at DESC, id DESC)
    WHERE verification_id IS NOT NULL;

-- +goose Down
DROP INDEX sends_verified_address_idx;
