-- Live settings in one table (docs/architecture.md, "Live settings"): one row per name, its
-- JSON document and the version every instance polls. The fraud guard's and spend's rows
-- move here from their own tables, and the apps' version (whose apps, keys and test numbers
-- stay in their tables) becomes the row 'apps' without a document.

-- +goose Up
CREATE TABLE settings (
    name       text        PRIMARY KEY,
    -- Moved on by every change of the document or of the rows it stands for.
    version    bigint      NOT NULL DEFAULT 0,
    -- NULL until the first write, when the feature's defaults apply.
    value      jsonb,
    updated_at timestamptz
);
INSERT INTO settings (name, version, value, updated_at)
    SELECT 'fraud', version, config, updated_at FROM fraud_settings;
INSERT INTO settings (name, version, value, updated_at)
    SELECT 'spend', version, config, updated_at FROM spend_settings;
INSERT INTO settings (name, version)
    SELECT 'apps', version FROM apps_version WHERE id = 1;
DROP TABLE fraud_settings;
DROP TABLE spend_settings;
DROP TABLE apps_version;

-- +goose Down
CREATE TABLE fraud_settings (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    version    bigint      NOT NULL DEFAULT 0,
    config     jsonb,
    updated_at timestamptz
);
INSERT INTO fraud_settings (id, version, config, updated_at)
    SELECT true, coalesce(max(version), 0), max(value::text)::jsonb, max(updated_at) FROM settings WHERE name = 'fraud';
CREATE TABLE spend_settings (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    version    bigint      NOT NULL DEFAULT 0,
    config     jsonb,
    updated_at timestamptz
);
INSERT INTO spend_settings (id, version, config, updated_at)
    SELECT true, coalesce(max(version), 0), max(value::text)::jsonb, max(updated_at) FROM settings WHERE name = 'spend';
CREATE TABLE apps_version (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint  NOT NULL
);
INSERT INTO apps_version
    SELECT 1, coalesce(max(version), 0) FROM settings WHERE name = 'apps';
DROP TABLE settings;
