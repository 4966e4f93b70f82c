package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// Stats implements history.Store with two grouped scans of the time range, whose
// rows history.StatCounter sorts into buckets: each reads the hourly rollups before the
// rolled-up boundary and raw rows from it on, both in one statement's snapshot, so an
// answer is the same before, during and after a purge. An hour's rollup lands in the
// bucket holding the hour's start (buckets shorter than an hour see it whole there).
func (s *Store) Stats(ctx context.Context, since time.Time, bucket time.Duration, appID string) ([]history.StatBucket, error) {
	c, err := history.NewStatCounter(since, s.Now(), bucket)
	if err != nil {
		return nil, fmt.Errorf("postgres: stats: %w", err)
	}
	from, to := c.Range()
	secs := int64(bucket / time.Second)
	if appID != "" && !validID(appID) {
		return c.Buckets(), nil // no app has this id, so nothing happened in it
	}
	var app *string // NULL counts every app
	if appID != "" {
		app = &appID
	}

	// date_bin from the epoch starts buckets where history.BucketStart does. The
	// statements are planned for this range, not cached as generic ones.
	rows, err := s.pool.Query(ctx, `SELECT date_bin(make_interval(secs => $3::bigint), created_at, 'epoch'), status, reason, count(*)
		FROM sends WHERE created_at >= $1::timestamptz AND created_at >= (`+rolledBeforeSQL+`) AND created_at < $2::timestamptz
			AND ($4::uuid IS NULL OR app_id = $4::uuid) GROUP BY 1, 2, 3
		UNION ALL
		SELECT date_bin(make_interval(secs => $3::bigint), hour, 'epoch'), kind, reason, sum(n)::bigint
		FROM stats_hourly WHERE kind <> 'approved' AND hour >= $1::timestamptz AND hour < $2::timestamptz AND hour < (`+rolledBeforeSQL+`)
			AND ($4::uuid IS NULL OR app_id = $4::uuid) GROUP BY 1, 2, 3`,
		pgx.QueryExecModeExec, from, to, secs, app)
	if err != nil {
		return nil, wrap("stats", err)
	}
	var (
		at             time.Time
		status, reason string
		count          int
	)
	_, err = pgx.ForEachRow(rows, []any{&at, &status, &reason, &count}, func() error {
		c.AddSends(at, otp.SendStatus(status), reason, count)
		return nil
	})
	if err != nil {
		return nil, wrap("stats", err)
	}

	rows, err = s.pool.Query(ctx, `SELECT date_bin(make_interval(secs => $3::bigint), a.created_at, 'epoch'), count(*)
		FROM attempts a WHERE a.outcome = 'approved'
			AND a.created_at >= $1::timestamptz AND a.created_at >= (`+rolledBeforeSQL+`) AND a.created_at < $2::timestamptz
			AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM verifications v WHERE v.id = a.verification_id AND v.app_id = $4::uuid))
		GROUP BY 1
		UNION ALL
		SELECT date_bin(make_interval(secs => $3::bigint), hour, 'epoch'), sum(n)::bigint
		FROM stats_hourly WHERE kind = 'approved' AND hour >= $1::timestamptz AND hour < $2::timestamptz AND hour < (`+rolledBeforeSQL+`)
			AND ($4::uuid IS NULL OR app_id = $4::uuid) GROUP BY 1`,
		pgx.QueryExecModeExec, from, to, secs, app)
	if err != nil {
		return nil, wrap("stats", err)
	}
	_, err = pgx.ForEachRow(rows, []any{&at, &count}, func() error {
		c.AddApprovals(at, count)
		return nil
	})
	if err != nil {
		return nil, wrap("stats", err)
	}
	return c.Buckets(), nil
}

// rolledBeforeSQL is the rolled-up boundary as a scalar subquery: before it, history is
// read from the rollups; from it on, from raw rows. -infinity while nothing is rolled up.
const rolledBeforeSQL = `SELECT coalesce(rolled_before, '-infinity') FROM history_lifecycle`
