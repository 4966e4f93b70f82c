-- An app's rate limits (Twilio Verify's Service Rate Limits): each names a key the
-- caller supplies on a send (RateLimits[unique_name]=value) and has buckets, each a
-- sliding-window rule (max sends per interval seconds) on the key (app, rate limit, value),
-- decided with every other rule of the send in its one limiter call.

-- +goose Up
CREATE TABLE app_rate_limits (
    id          uuid        PRIMARY KEY,
    -- No foreign key: the default app has no app row to point at.
    app_id      uuid        NOT NULL,
    unique_name text        NOT NULL CHECK (unique_name <> ''),
    description text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (app_id, unique_name)
);

CREATE TABLE app_rate_limit_buckets (
    id               uuid        PRIMARY KEY,
    rate_limit_id    uuid        NOT NULL REFERENCES app_rate_limits (id) ON DELETE CASCADE,
    max              integer     NOT NULL CHECK (max > 0),
    interval_seconds integer     NOT NULL CHECK (interval_seconds > 0),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX app_rate_limit_buckets_limit_idx ON app_rate_limit_buckets (rate_limit_id);

-- +goose Down
DROP TABLE app_rate_limit_buckets;
DROP TABLE app_rate_limits;
