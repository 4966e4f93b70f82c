-- Twilio's Verification Attempts Summary counts sends of verifications (attempts), by
-- service, channel, country and number prefix, and those whose verification was approved
-- (converted). Past OTP_HISTORY_RETENTION the raw sends are gone; this hourly rollup keeps
-- what the summary's filters can ask, as stats_hourly keeps the charts.

-- +goose Up
CREATE TABLE attempts_hourly (
    hour      timestamptz NOT NULL,
    app_id    uuid        NOT NULL,
    channel   text        NOT NULL,
    -- '' for email.
    country   text        NOT NULL,
    -- The number's first seven characters ("+" and six digits), the longest prefix the
    -- summary takes; '' for email.
    prefix    text        NOT NULL,
    converted boolean     NOT NULL,
    n         bigint      NOT NULL CHECK (n > 0),
    PRIMARY KEY (hour, app_id, channel, country, prefix, converted)
);

-- +goose Down
DROP TABLE attempts_hourly;
