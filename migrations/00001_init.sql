-- Verifications, their sends and check attempts, and the admin audit log.
-- Times are written by the application (its clock decides expiry); ids are UUIDv7
-- made by the service, so id order follows creation order.

-- +goose Up
CREATE TABLE verifications (
    id           uuid        PRIMARY KEY,
    phone        text        NOT NULL,
    channel      text        NOT NULL,
    locale       text        NOT NULL,
    status       text        NOT NULL
        CONSTRAINT verifications_status_check
        CHECK (status IN ('pending', 'approved', 'expired', 'failed', 'canceled')),
    code_hashes  bytea[]     NOT NULL DEFAULT '{}',
    sends        integer     NOT NULL DEFAULT 0 CHECK (sends >= 0),
    attempts     integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts integer     NOT NULL CHECK (max_attempts >= 0),
    client_ip    text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    closed_at    timestamptz,
    -- A verification is closed exactly when it left pending.
    CONSTRAINT verifications_closed_check CHECK ((status = 'pending') = (closed_at IS NULL))
);

-- One pending verification per phone: concurrent creators race on this index.
CREATE UNIQUE INDEX verifications_pending_phone_key ON verifications (phone) WHERE status = 'pending';
-- A check by phone takes the phone's newest verification.
CREATE INDEX verifications_phone_created_idx ON verifications (phone, created_at DESC, id DESC);

CREATE TABLE sends (
    id                  uuid        PRIMARY KEY,
    verification_id     uuid        REFERENCES verifications (id) ON DELETE CASCADE,
    phone               text        NOT NULL,
    client_ip           text        NOT NULL DEFAULT '',
    status              text        NOT NULL
        CONSTRAINT sends_status_check
        CHECK (status IN ('sending', 'sent', 'failed', 'blocked', 'duplicate')),
    -- The refusing rule of a blocked or duplicate send, such as 'phone 1/1m'.
    reason              text        NOT NULL DEFAULT '',
    provider            text        NOT NULL DEFAULT '',
    provider_message_id text        NOT NULL DEFAULT '',
    error               text        NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);

-- Keyset pagination of the history, newest first, unfiltered and per filter.
CREATE INDEX sends_created_idx ON sends (created_at DESC, id DESC);
CREATE INDEX sends_phone_created_idx ON sends (phone, created_at DESC, id DESC);
CREATE INDEX sends_client_ip_created_idx ON sends (client_ip, created_at DESC, id DESC);
CREATE INDEX sends_status_created_idx ON sends (status, created_at DESC, id DESC);
CREATE INDEX sends_verification_idx ON sends (verification_id) WHERE verification_id IS NOT NULL;

CREATE TABLE attempts (
    id              bigserial   PRIMARY KEY,
    verification_id uuid        NOT NULL REFERENCES verifications (id) ON DELETE CASCADE,
    outcome         text        NOT NULL
        CONSTRAINT attempts_outcome_check
        CHECK (outcome IN ('approved', 'invalid_code', 'expired', 'too_many_attempts', 'not_pending')),
    client_ip       text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL
);

CREATE INDEX attempts_verification_idx ON attempts (verification_id, created_at, id);
-- Approvals per hour for the console's charts.
CREATE INDEX attempts_approved_created_idx ON attempts (created_at) WHERE outcome = 'approved';

-- What operators did in the admin console, such as resetting a limit.
CREATE TABLE admin_actions (
    id         bigserial   PRIMARY KEY,
    action     text        NOT NULL CHECK (action <> ''),
    target     text        NOT NULL DEFAULT '',
    detail     text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

CREATE INDEX admin_actions_created_idx ON admin_actions (created_at DESC, id DESC);

-- +goose Down
DROP TABLE admin_actions;
DROP TABLE attempts;
DROP TABLE sends;
DROP TABLE verifications;
