-- History by day: sends and attempts become tables partitioned by range of created_at, one
-- partition per UTC day (sends_p20261203, attempts_p20261203) and a default partition
-- (sends_default, attempts_default) for rows of a day that has none. Retention then removes
-- a day of history by dropping its partitions instead of deleting its rows one by one, and
-- the day being written has indexes the size of a day, not of the whole retention.
--
-- The primary keys include created_at, as a partitioned table's unique keys must. Nothing
-- refers to sends or attempts by foreign key; both still refer to verifications, which stays
-- one table: its unique index of pending verifications per app and phone cannot include a
-- creation time.
--
-- Upgrading copies every row of both tables once, inside the migration's transaction, and
-- builds their indexes afresh: about as long as a VACUUM FULL of the two tables, while the
-- service is stopped. A partition is made for each day of the last 120 with rows, and for
-- today and three days ahead; older rows go to the default partition. The retention job
-- makes the days ahead from then on (otpgate_history_partition).

-- +goose Up
-- otpgate_history_partition makes the partition of p_table (sends or attempts) for the UTC
-- day p_day, unless it exists or the default partition already holds rows of that day (those
-- rows then keep the day in the default partition, whose rows retention deletes in batches).
-- It answers whether it made one. It takes an ACCESS EXCLUSIVE lock on p_table and its
-- default partition for a moment; callers bound the wait with lock_timeout.
-- +goose StatementBegin
CREATE FUNCTION otpgate_history_partition(p_table text, p_day date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    part text := p_table || '_p' || to_char(p_day, 'YYYYMMDD');
    lo timestamptz := p_day::timestamp AT TIME ZONE 'UTC';
    hi timestamptz := (p_day + 1)::timestamp AT TIME ZONE 'UTC';
    taken boolean;
BEGIN
    IF p_table NOT IN ('sends', 'attempts') THEN
        RAISE EXCEPTION 'otpgate_history_partition: % is not a history table', p_table;
    END IF;
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE created_at >= $1 AND created_at < $2)', p_table || '_default')
        INTO taken USING lo, hi;
    IF taken THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, p_table, lo, hi);
    RETURN true;
END
$$;
-- +goose StatementEnd

ALTER TABLE sends RENAME TO sends_unpartitioned;
ALTER TABLE attempts RENAME TO attempts_unpartitioned;

-- LIKE keeps the columns in their order, their defaults and their checks (by name).
CREATE TABLE sends (LIKE sends_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)
    PARTITION BY RANGE (created_at);
CREATE TABLE sends_default PARTITION OF sends DEFAULT;
CREATE TABLE attempts (LIKE attempts_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)
    PARTITION BY RANGE (created_at);
CREATE TABLE attempts_default PARTITION OF attempts DEFAULT;
-- The id sequence goes with the new table (its default already names it).
ALTER SEQUENCE attempts_id_seq OWNED BY attempts.id;

-- A partition for each day of the last 120 that has history, and for today and three days
-- ahead: a statement over every partition locks each with its indexes, so days without rows
-- get none, and older history (past the default retention by a month) stays in the default
-- partition, where retention deletes it in batches as before.
SELECT otpgate_history_partition(t, d)
FROM (VALUES ('sends'), ('attempts')) AS tables (t),
    (SELECT DISTINCT (created_at AT TIME ZONE 'UTC')::date AS d FROM sends_unpartitioned
        WHERE created_at >= now() - interval '120 days'
    UNION
    SELECT DISTINCT (created_at AT TIME ZONE 'UTC')::date FROM attempts_unpartitioned
        WHERE created_at >= now() - interval '120 days'
    UNION
    SELECT ((now() AT TIME ZONE 'UTC') + n * interval '1 day')::date FROM generate_series(0, 3) AS n) AS days
ORDER BY d;

INSERT INTO sends SELECT * FROM sends_unpartitioned;
INSERT INTO attempts SELECT * FROM attempts_unpartitioned;
DROP TABLE sends_unpartitioned;
DROP TABLE attempts_unpartitioned;

ALTER TABLE sends ADD CONSTRAINT sends_pkey PRIMARY KEY (id, created_at),
    ADD CONSTRAINT sends_verification_id_fkey FOREIGN KEY (verification_id) REFERENCES verifications (id) ON DELETE CASCADE;
CREATE INDEX sends_created_idx ON sends (created_at DESC, id DESC);
CREATE INDEX sends_phone_created_idx ON sends (phone, created_at DESC, id DESC);
CREATE INDEX sends_client_ip_created_idx ON sends (client_ip, created_at DESC, id DESC);
CREATE INDEX sends_status_created_idx ON sends (status, created_at DESC, id DESC);
CREATE INDEX sends_verification_idx ON sends (verification_id) WHERE verification_id IS NOT NULL;
CREATE INDEX sends_shadow_created_idx ON sends (created_at DESC, id DESC) WHERE shadow <> '';
CREATE INDEX sends_app_created_idx ON sends (app_id, created_at DESC, id DESC);
CREATE INDEX sends_provider_message_idx ON sends (provider, provider_message_id) WHERE provider_message_id <> '';
CREATE INDEX sends_challenged_created_idx ON sends (created_at DESC, id DESC)
    WHERE fraud IS NOT NULL AND fraud->>'action' IN ('challenged', 'passed');

ALTER TABLE attempts ADD CONSTRAINT attempts_pkey PRIMARY KEY (id, created_at),
    ADD CONSTRAINT attempts_verification_id_fkey FOREIGN KEY (verification_id) REFERENCES verifications (id) ON DELETE CASCADE;
CREATE INDEX attempts_verification_idx ON attempts (verification_id, created_at, id);
CREATE INDEX attempts_approved_created_idx ON attempts (created_at) WHERE outcome = 'approved';

ANALYZE sends, attempts;

-- +goose Down
ALTER TABLE sends RENAME TO sends_partitioned;
ALTER TABLE attempts RENAME TO attempts_partitioned;
CREATE TABLE sends (LIKE sends_partitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE);
CREATE TABLE attempts (LIKE attempts_partitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE);
ALTER SEQUENCE attempts_id_seq OWNED BY attempts.id;
INSERT INTO sends SELECT * FROM sends_partitioned;
INSERT INTO attempts SELECT * FROM attempts_partitioned;
DROP TABLE sends_partitioned;
DROP TABLE attempts_partitioned;
DROP FUNCTION otpgate_history_partition(text, date);

ALTER TABLE sends ADD CONSTRAINT sends_pkey PRIMARY KEY (id),
    ADD CONSTRAINT sends_verification_id_fkey FOREIGN KEY (verification_id) REFERENCES verifications (id) ON DELETE CASCADE;
CREATE INDEX sends_created_idx ON sends (created_at DESC, id DESC);
CREATE INDEX sends_phone_created_idx ON sends (phone, created_at DESC, id DESC);
CREATE INDEX sends_client_ip_created_idx ON sends (client_ip, created_at DESC, id DESC);
CREATE INDEX sends_status_created_idx ON sends (status, created_at DESC, id DESC);
CREATE INDEX sends_verification_idx ON sends (verification_id) WHERE verification_id IS NOT NULL;
CREATE INDEX sends_shadow_created_idx ON sends (created_at DESC, id DESC) WHERE shadow <> '';
CREATE INDEX sends_app_created_idx ON sends (app_id, created_at DESC, id DESC);
CREATE INDEX sends_provider_message_idx ON sends (provider, provider_message_id) WHERE provider_message_id <> '';
CREATE INDEX sends_challenged_created_idx ON sends (created_at DESC, id DESC)
    WHERE fraud IS NOT NULL AND fraud->>'action' IN ('challenged', 'passed');

ALTER TABLE attempts ADD CONSTRAINT attempts_pkey PRIMARY KEY (id),
    ADD CONSTRAINT attempts_verification_id_fkey FOREIGN KEY (verification_id) REFERENCES verifications (id) ON DELETE CASCADE;
CREATE INDEX attempts_verification_idx ON attempts (verification_id, created_at, id);
CREATE INDEX attempts_approved_created_idx ON attempts (created_at) WHERE outcome = 'approved';
