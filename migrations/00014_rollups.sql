-- History that ends (OTP_HISTORY_RETENTION): hourly rollups that keep the console's charts
-- and the fraud conversion figures after the raw rows are purged, and the boundary below
-- which the rollups, not the raw rows, are what counts. Hours are whole hours since the
-- Unix epoch (date_bin), whatever the session's time zone.

-- +goose Up
CREATE TABLE history_lifecycle (
    id            boolean     PRIMARY KEY DEFAULT true CHECK (id),
    -- Every hour before this one is counted in the rollups: readers take those hours from the
    -- rollups, and only raw rows created before it may be purged. NULL until the first roll-up.
    rolled_before timestamptz CHECK (rolled_before = date_bin('1 hour', rolled_before, 'epoch'))
);
INSERT INTO history_lifecycle (id) VALUES (true);

-- What the console's charts count, per hour and app: sends by status and refusing rule
-- (kind is the send's status, reason its rule, '' for sends that went out), and approved
-- checks (kind 'approved', counted for the app of their verification).
CREATE TABLE stats_hourly (
    hour   timestamptz NOT NULL,
    app_id uuid        NOT NULL,
    kind   text        NOT NULL,
    reason text        NOT NULL,
    n      bigint      NOT NULL CHECK (n > 0),
    PRIMARY KEY (hour, app_id, kind, reason)
);

-- What the fraud conversion figures count, per hour and number prefix: sends that went out
-- (sent or sending), sends refused as blocked, and approvals. The prefix leaves out the
-- prefix_drop last digits that the fraud guard's setting named when the hour was rolled up.
CREATE TABLE conversion_hourly (
    hour        timestamptz NOT NULL,
    prefix      text        NOT NULL,
    prefix_drop smallint    NOT NULL CHECK (prefix_drop BETWEEN 1 AND 8),
    sends       bigint      NOT NULL CHECK (sends >= 0),
    blocked     bigint      NOT NULL CHECK (blocked >= 0),
    approvals   bigint      NOT NULL CHECK (approvals >= 0),
    PRIMARY KEY (hour, prefix)
);

-- +goose Down
DROP TABLE conversion_hourly;
DROP TABLE stats_hourly;
DROP TABLE history_lifecycle;
