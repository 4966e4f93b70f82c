package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/otp"
)

// Stats implements otp.HistoryStore with two grouped scans of the time range.
func (s *Store) Stats(ctx context.Context, since time.Time, bucket time.Duration) ([]otp.StatBucket, error) {
	start, n, err := otp.StatRange(since, s.Now(), bucket)
	if err != nil {
		return nil, fmt.Errorf("postgres: stats: %w", err)
	}
	end := start.Add(time.Duration(n) * bucket)
	secs := int64(bucket / time.Second)
	out := make([]otp.StatBucket, n)
	for i := range out {
		out[i] = otp.StatBucket{Start: start.Add(time.Duration(i) * bucket), Blocked: map[string]int{}}
	}
	// at turns a bucket number (unix seconds / bucket seconds) into its bucket in out.
	spare := otp.StatBucket{Blocked: map[string]int{}}
	at := func(k int64) *otp.StatBucket {
		if i := (k*secs - start.Unix()) / secs; i >= 0 && i < int64(n) {
			return &out[i]
		}
		return &spare // cannot happen: the range conditions keep k inside
	}

	rows, err := s.pool.Query(ctx, `SELECT floor(extract(epoch FROM created_at) / $3::bigint)::bigint, status, reason, count(*)
		FROM sends WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz GROUP BY 1, 2, 3`,
		pgx.QueryExecModeExec, start, end, secs) // planned for this range, not a cached generic one
	if err != nil {
		return nil, wrap("stats", err)
	}
	for rows.Next() {
		var (
			k              int64
			status, reason string
			count          int
		)
		if err := rows.Scan(&k, &status, &reason, &count); err != nil {
			rows.Close()
			return nil, wrap("stats", err)
		}
		b := at(k)
		switch otp.SendStatus(status) {
		case otp.SendBlocked:
			b.Blocked[reason] += count
		case otp.SendDuplicate:
			b.Duplicates += count
		case otp.SendFailed:
			b.Failed += count
			b.Sends += count
		default:
			b.Sends += count
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("stats", err)
	}

	rows, err = s.pool.Query(ctx, `SELECT floor(extract(epoch FROM created_at) / $3::bigint)::bigint, count(*)
		FROM attempts WHERE outcome = 'approved' AND created_at >= $1::timestamptz AND created_at < $2::timestamptz GROUP BY 1`,
		pgx.QueryExecModeExec, start, end, secs)
	if err != nil {
		return nil, wrap("stats", err)
	}
	for rows.Next() {
		var k int64
		var count int
		if err := rows.Scan(&k, &count); err != nil {
			rows.Close()
			return nil, wrap("stats", err)
		}
		at(k).Approvals += count
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("stats", err)
	}
	for i := range out {
		if out[i].Sends > 0 {
			out[i].ApprovalRatio = float64(out[i].Approvals) / float64(out[i].Sends)
		}
	}
	return out, nil
}
