-- Apps (one configuration of the service each) and their API keys; verifications and
-- sends belong to an app. Rows written before this migration belong to the default app,
-- whose settings come from the environment and which therefore has no row here.

-- +goose Up
CREATE TABLE apps (
    id                uuid        PRIMARY KEY,
    name              text        NOT NULL CHECK (name <> ''),
    code_length       integer     NOT NULL CHECK (code_length BETWEEN 4 AND 10),
    code_ttl_ms       bigint      NOT NULL CHECK (code_ttl_ms > 0 AND code_ttl_ms <= 600000),
    max_sends         integer     NOT NULL CHECK (max_sends >= 1),
    max_attempts      integer     NOT NULL CHECK (max_attempts >= 1),
    locales           text[]      NOT NULL DEFAULT '{}',
    allowed_countries text[]      NOT NULL DEFAULT '{}',
    channels          text[]      NOT NULL DEFAULT '{}',
    -- Rule lists as operators write them, such as '1/1m,10/1h'; '' is none.
    send_rules        text        NOT NULL DEFAULT '',
    check_rules       text        NOT NULL DEFAULT '',
    access            text        NOT NULL CHECK (access IN ('public', 'key')),
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    deleted_at        timestamptz
);

CREATE TABLE app_keys (
    id                text        PRIMARY KEY,
    -- No foreign key: the default app's keys have no app row to point at.
    app_id            uuid        NOT NULL,
    name              text        NOT NULL DEFAULT '',
    secret_sha256     bytea       NOT NULL CHECK (length(secret_sha256) = 32),
    trusted_client_ip boolean     NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL,
    last_used_at      timestamptz,
    revoked_at        timestamptz
);

CREATE INDEX app_keys_app_idx ON app_keys (app_id, created_at, id);

-- One row: bumped by every change of apps or keys, polled by every instance.
CREATE TABLE apps_version (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint  NOT NULL
);
INSERT INTO apps_version VALUES (1, 0);

ALTER TABLE verifications ADD COLUMN app_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001';
ALTER TABLE sends ADD COLUMN app_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001';

-- One pending verification per app and phone: two apps are two services.
DROP INDEX verifications_pending_phone_key;
CREATE UNIQUE INDEX verifications_pending_app_phone_key ON verifications (app_id, phone) WHERE status = 'pending';
-- A check by phone takes the app's newest verification of the phone.
DROP INDEX verifications_phone_created_idx;
CREATE INDEX verifications_app_phone_created_idx ON verifications (app_id, phone, created_at DESC, id DESC);
-- History filtered by app, newest first.
CREATE INDEX sends_app_created_idx ON sends (app_id, created_at DESC, id DESC);

-- An API call may cancel a verification; that is recorded as an attempt.
ALTER TABLE attempts DROP CONSTRAINT attempts_outcome_check;
ALTER TABLE attempts ADD CONSTRAINT attempts_outcome_check
    CHECK (outcome IN ('approved', 'invalid_code', 'expired', 'too_many_attempts', 'not_pending', 'canceled'));

-- +goose Down
ALTER TABLE attempts DROP CONSTRAINT attempts_outcome_check;
DELETE FROM attempts WHERE outcome = 'canceled';
ALTER TABLE attempts ADD CONSTRAINT attempts_outcome_check
    CHECK (outcome IN ('approved', 'invalid_code', 'expired', 'too_many_attempts', 'not_pending'));
DROP INDEX sends_app_created_idx;
DROP INDEX verifications_app_phone_created_idx;
DROP INDEX verifications_pending_app_phone_key;
DELETE FROM verifications WHERE app_id <> '00000000-0000-0000-0000-000000000001';
CREATE UNIQUE INDEX verifications_pending_phone_key ON verifications (phone) WHERE status = 'pending';
CREATE INDEX verifications_phone_created_idx ON verifications (phone, created_at DESC, id DESC);
ALTER TABLE sends DROP COLUMN app_id;
ALTER TABLE verifications DROP COLUMN app_id;
DROP TABLE apps_version;
DROP TABLE app_keys;
DROP TABLE apps;
