-- The fraud guard explains itself, apps get test numbers and their own number types:
-- a send keeps why the guard refused, challenged, passed or flagged it (fraud, the shape of
-- the send.blocked event's "fraud" field) and whether it went to a test number; a block
-- keeps why it started; an app may replace the server's denied number types (NULL keeps
-- them) and has test numbers, whose fixed codes are sealed with a key from OTP_SECRET.

-- +goose Up
ALTER TABLE sends
    ADD COLUMN fraud jsonb,
    ADD COLUMN test  boolean NOT NULL DEFAULT false;

-- The Fraud page lists the newest challenged sends, as it lists the shadow ones.
CREATE INDEX sends_challenged_created_idx ON sends (created_at DESC, id DESC)
    WHERE fraud IS NOT NULL AND fraud->>'action' IN ('challenged', 'passed');

ALTER TABLE fraud_blocks ADD COLUMN why jsonb;

ALTER TABLE apps ADD COLUMN denied_number_types text[];

CREATE TABLE app_test_numbers (
    id          uuid        PRIMARY KEY,
    -- No foreign key: the default app has no app row to point at.
    app_id      uuid        NOT NULL,
    -- The E.164 number or the normalised email address.
    address     text        NOT NULL CHECK (address <> ''),
    -- AES-256-GCM of the fixed code, bound to the row's id.
    code_sealed bytea       NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    UNIQUE (app_id, address)
);

-- +goose Down
DROP TABLE app_test_numbers;
ALTER TABLE apps DROP COLUMN denied_number_types;
ALTER TABLE fraud_blocks DROP COLUMN why;
DROP INDEX sends_challenged_created_idx;
ALTER TABLE sends DROP COLUMN test, DROP COLUMN fraud;
