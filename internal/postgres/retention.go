package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/retention"
)

var _ retention.Store = (*Store)(nil)

// lifecycleLockID names the advisory lock that lets one instance at a time roll up and purge.
const lifecycleLockID int64 = 0x6f7470_6c6663 // "otp" "lfc"

// purgeTarget is one table the lifecycle job empties, with its statements. Every statement
// deletes by primary key (or ctid) the rows that a bounded, index-driven select picks —
// = ANY(ARRAY(…)), since IN (…) would be planned as a join over the whole table — skipping
// rows that others hold, so it never waits for a row lock and holds its own for one batch.
// To purge another table — such as delivered events — add it to purgeTargets, before the
// tables its rows refer to.
type purgeTarget struct {
	retention.Target
	// purge deletes at most @limit rows created before @before. @bound is the smallest
	// UUIDv7 of a minute after @before: tables whose ids are UUIDv7, made at creation,
	// find their old rows by a range of the primary key.
	purge string
	// oldest answers the creation time of the oldest row, or NULL.
	oldest string
	// uncounted is set for history no rollup counts: it goes at the horizon whether or not
	// the rollups have reached it.
	uncounted bool
	// partitioned is set for a table partitioned by day (migrations/00100): purge deletes
	// from its default partition, and DropDays drops its whole days.
	partitioned bool
}

// purgeTargets lists the tables of the lifecycle, children first: attempts and sends refer
// to verifications, which go once nothing refers to them (so a verification whose last
// check came after the horizon stays until that check's row goes too). Delivered and
// parked events refer to nothing of history and go first.
func purgeTargets() []purgeTarget {
	return []purgeTarget{{
		Target: retention.Target{Name: "event_outbox", Keep: retention.KeepHistory},
		// Delivered and parked events; pending ones wait for their delivery or parking.
		purge: `DELETE FROM event_outbox WHERE id = ANY(ARRAY(
			SELECT id FROM event_outbox WHERE status <> 'pending' AND created_at < @before
			ORDER BY created_at LIMIT @limit FOR UPDATE SKIP LOCKED))`,
		oldest:    `SELECT min(created_at) FROM event_outbox WHERE status <> 'pending'`,
		uncounted: true,
	}, {
		Target: retention.Target{Name: "attempts", Keep: retention.KeepHistory},
		// Whole days go by DropDays; the statement deletes what the default partition holds.
		// Attempts have no index on their time; each belongs to a verification at least as
		// old, found by its id, and the attempts of one by their index.
		partitioned: true,
		purge: `DELETE FROM attempts_default WHERE id = ANY(ARRAY(
			SELECT a.id FROM verifications v JOIN attempts_default a ON a.verification_id = v.id
			WHERE v.id < @bound AND a.created_at < @before
			ORDER BY v.id LIMIT @limit FOR UPDATE OF a SKIP LOCKED))`,
		oldest: `SELECT created_at FROM attempts ORDER BY id LIMIT 1`,
	}, {
		Target: retention.Target{Name: "sends", Keep: retention.KeepHistory},
		// Refused sends (blocked, duplicate) are rows here too. Whole days go by DropDays;
		// the statement deletes what the default partition holds.
		partitioned: true,
		purge: `DELETE FROM sends_default WHERE id = ANY(ARRAY(
			SELECT id FROM sends_default WHERE created_at < @before ORDER BY created_at LIMIT @limit FOR UPDATE SKIP LOCKED))`,
		oldest: `SELECT min(created_at) FROM sends`,
	}, {
		Target: retention.Target{Name: "verifications", Keep: retention.KeepHistory},
		// The rows that refer to a verification are looked for one verification at a time
		// (scalar subqueries, which the planner does not turn into joins): statistics taken
		// before sends and attempts were purged would otherwise suggest hashing both tables
		// whole for every batch.
		purge: `DELETE FROM verifications WHERE id = ANY(ARRAY(
			SELECT v.id FROM verifications v WHERE v.id < @bound AND v.created_at < @before
				AND (SELECT s.id FROM sends s WHERE s.verification_id = v.id LIMIT 1) IS NULL
				AND (SELECT a.id FROM attempts a WHERE a.verification_id = v.id LIMIT 1) IS NULL
			ORDER BY v.id LIMIT @limit FOR UPDATE SKIP LOCKED))`,
		oldest: `SELECT created_at FROM verifications ORDER BY id LIMIT 1`,
	}, {
		Target: retention.Target{Name: "stats_hourly", Keep: retention.KeepRollups},
		purge: `DELETE FROM stats_hourly WHERE ctid = ANY(ARRAY(
			SELECT ctid FROM stats_hourly WHERE hour < @before ORDER BY hour LIMIT @limit))`,
		oldest: `SELECT min(hour) FROM stats_hourly`,
	}, {
		Target: retention.Target{Name: "conversion_hourly", Keep: retention.KeepRollups},
		purge: `DELETE FROM conversion_hourly WHERE ctid = ANY(ARRAY(
			SELECT ctid FROM conversion_hourly WHERE hour < @before ORDER BY hour LIMIT @limit))`,
		oldest: `SELECT min(hour) FROM conversion_hourly`,
	}, {
		Target: retention.Target{Name: "attempts_hourly", Keep: retention.KeepRollups},
		purge: `DELETE FROM attempts_hourly WHERE ctid = ANY(ARRAY(
			SELECT ctid FROM attempts_hourly WHERE hour < @before ORDER BY hour LIMIT @limit))`,
		oldest: `SELECT min(hour) FROM attempts_hourly`,
	}}
}

func findTarget(name string) (purgeTarget, error) {
	for _, t := range purgeTargets() {
		if t.Name == name {
			return t, nil
		}
	}
	return purgeTarget{}, fmt.Errorf("%w: no purge target %q", errBug, name)
}

// LifecycleTargets implements retention.Store.
func (s *Store) LifecycleTargets() []retention.Target {
	ts := purgeTargets()
	out := make([]retention.Target, len(ts))
	for i, t := range ts {
		out[i] = t.Target
	}
	return out
}

// TryLifecycleLock implements retention.Store with a session advisory lock on a connection
// of its own, held until release.
func (s *Store) TryLifecycleLock(ctx context.Context) (func(), bool, error) {
	_, release, ok, err := s.tryAdvisoryLock(ctx, lifecycleLockID, "lifecycle lock")
	return release, ok, err
}

// tryAdvisoryLock takes the session advisory lock id on a connection of its own, which
// the caller may work on until it calls release; ok is false, with nothing held, when
// another session holds the lock. what names the lock in errors.
func (s *Store) tryAdvisoryLock(ctx context.Context, id int64, what string) (conn *pgxpool.Conn, release func(), ok bool, err error) {
	conn, err = s.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, false, wrap(what, err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, id).Scan(&ok); err != nil || !ok {
		conn.Release()
		return nil, nil, false, wrap(what, err)
	}
	release = func() {
		// A fresh bound: ctx may be what ended the pass. A lock that cannot be let go dies
		// with its connection, which is then closed rather than returned to the pool.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, id); err != nil {
			_ = conn.Conn().Close(uctx)
		}
		conn.Release()
	}
	return conn, release, true, nil
}

// Purge implements retention.Store. History is never purged at or after the rolled-up
// boundary, read afresh for each statement (it only ever moves on). Of a table partitioned
// by day, it deletes the rows of the default partition; DropDays drops the days.
func (s *Store) Purge(ctx context.Context, target string, before time.Time, limit int) (int, error) {
	t, err := findTarget(target)
	if err != nil {
		return 0, fmt.Errorf("postgres: purge: %w", err)
	}
	if before, err = s.purgeBound(ctx, t, before); err != nil || before.IsZero() {
		return 0, wrap("purge "+target, err)
	}
	n := 0
	err = s.inTx(ctx, "purge "+target, func(tx pgx.Tx) error {
		// A batch runs for milliseconds; the planner's estimate of the verifications' would
		// have JIT spend longer compiling it.
		if _, err := tx.Exec(ctx, `SET LOCAL jit = off`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, t.purge, purgeArgs(before, limit))
		n = int(tag.RowsAffected())
		return err
	})
	return n, err
}

// purgeBound is what of target may go for a purge before before: before, or the rolled-up
// boundary when that is earlier and target is history the rollups count; zero when nothing
// may go yet.
func (s *Store) purgeBound(ctx context.Context, t purgeTarget, before time.Time) (time.Time, error) {
	if t.Keep != retention.KeepHistory || t.uncounted {
		return before, nil
	}
	rolled, err := s.rolledBefore(ctx, s.pool)
	if err != nil || rolled.IsZero() {
		return time.Time{}, err
	}
	return minTime(before, rolled), nil
}

// purgeArgs are the arguments of a purge statement.
func purgeArgs(before time.Time, limit int) pgx.NamedArgs {
	return pgx.NamedArgs{"before": before, "limit": limit, "bound": uuidV7Floor(before.Add(time.Minute))}
}

// Oldest implements retention.Store.
func (s *Store) Oldest(ctx context.Context, target string) (time.Time, error) {
	t, err := findTarget(target)
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: oldest: %w", err)
	}
	var at *time.Time
	err = s.pool.QueryRow(ctx, t.oldest).Scan(&at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, wrap("oldest "+target, err)
	case at == nil:
		return time.Time{}, nil
	}
	return at.UTC(), nil
}

// querier is what pools, connections and transactions share for reading one row.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// rolledBefore reads the rolled-up boundary; zero while nothing was rolled up.
func (s *Store) rolledBefore(ctx context.Context, db querier) (time.Time, error) {
	var at *time.Time
	if err := db.QueryRow(ctx, `SELECT rolled_before FROM history_lifecycle`).Scan(&at); err != nil {
		return time.Time{}, err
	}
	if at == nil {
		return time.Time{}, nil
	}
	return at.UTC(), nil
}

// uuidV7Floor is the smallest UUIDv7 made in t's millisecond: every UUIDv7 made earlier
// sorts before it, every one made then or later after it.
func uuidV7Floor(t time.Time) uuid.UUID {
	var u uuid.UUID
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6], u[8] = 0x70, 0x80 // version 7, RFC 9562 variant, everything else zero
	return u
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
