-- The fraud guard: its live settings, the safe and block lists, the blocks its trips
-- start, and, on each send, what shadow rules would have refused.

-- +goose Up
CREATE TABLE fraud_settings (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    -- Bumped by every change of the settings or the lists; every instance polls it.
    version    bigint      NOT NULL DEFAULT 0,
    -- The settings by name, as text; NULL until the first instance stores its defaults.
    config     jsonb,
    updated_at timestamptz
);
INSERT INTO fraud_settings (id) VALUES (true);

CREATE TABLE fraud_list_entries (
    id         bigserial   PRIMARY KEY,
    list       text        NOT NULL CHECK (list IN ('safe', 'block')),
    kind       text        NOT NULL CHECK (kind IN ('number', 'prefix', 'country', 'cidr')),
    value      text        NOT NULL,
    note       text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    CONSTRAINT fraud_list_entries_value_key UNIQUE (list, kind, value)
);

CREATE TABLE fraud_blocks (
    id         uuid        PRIMARY KEY,
    scope      text        NOT NULL,
    target     text        NOT NULL,
    mode       text        NOT NULL CHECK (mode IN ('enforce', 'shadow')),
    reason     text        NOT NULL DEFAULT '',
    started_at timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    lifted_at  timestamptz,
    lifted_by  text        NOT NULL DEFAULT ''
);

CREATE INDEX fraud_blocks_started_idx ON fraud_blocks (started_at DESC, id DESC);
-- The active blocks, for the console and the gauge.
CREATE INDEX fraud_blocks_active_idx ON fraud_blocks (ends_at) WHERE lifted_at IS NULL;

-- What shadow rules and a shadow guard would have refused, such as 'prefix 10/1h:shadow'.
ALTER TABLE sends ADD COLUMN shadow text NOT NULL DEFAULT '';
CREATE INDEX sends_shadow_created_idx ON sends (created_at DESC, id DESC) WHERE shadow <> '';

-- +goose Down
DROP INDEX sends_shadow_created_idx;
ALTER TABLE sends DROP COLUMN shadow;
DROP TABLE fraud_blocks;
DROP TABLE fraud_list_entries;
DROP TABLE fraud_settings;
