-- History that stays fast as it grows: verifications keeps no index over all its rows keyed by
-- the address. That index took a random page of a table-sized tree on every send and on every
-- closing update (which is not HOT, status being in the pending index's predicate), and once
-- it outgrew the shared buffers it was the send path's largest cost. What it served reads
-- otherwise: a pending verification by the pending index, the newest closed one through its
-- newest send (sends is partitioned by day, each day's index small; every verification is
-- created with a send), and an erasure by reading the table once.

-- +goose Up
DROP INDEX IF EXISTS verifications_app_phone_created_idx;

-- +goose Down
CREATE INDEX verifications_app_phone_created_idx ON verifications (app_id, phone, created_at DESC, id DESC);
