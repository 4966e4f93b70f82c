package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/history"
)

// rollUpSpan is the most hours one RollUp call counts, in one transaction: a day of history
// is a few grouped index range scans, short enough not to hold back vacuum for long.
const rollUpSpan = 24 * time.Hour

// RollUp implements retention.Store. One transaction counts the hours into stats_hourly,
// conversion_hourly and attempts_hourly — deleting what an earlier count of the same hours left, so a second
// count gives the same rows — and moves the boundary, under the boundary row's lock.
func (s *Store) RollUp(ctx context.Context, from, before time.Time, prefixDrop int) (time.Time, int, error) {
	before, from = before.UTC().Truncate(time.Hour), from.UTC().Truncate(time.Hour)
	var (
		boundary time.Time
		hours    int
	)
	err := s.inTx(ctx, "roll up", func(tx pgx.Tx) error {
		var rolled *time.Time
		if err := tx.QueryRow(ctx, `SELECT rolled_before FROM history_lifecycle FOR UPDATE`).Scan(&rolled); err != nil {
			return err
		}
		start := from
		if rolled != nil {
			if !rolled.Before(before) {
				boundary = rolled.UTC()
				return nil
			}
			start = maxTime(start, rolled.UTC())
		}
		// Skip the hours without history: the first one to count holds the oldest send or
		// approval from start on.
		var next *time.Time
		if err := tx.QueryRow(ctx, `SELECT least(
				(SELECT min(created_at) FROM sends WHERE created_at >= $1),
				(SELECT min(created_at) FROM attempts WHERE outcome = 'approved' AND created_at >= $1))`,
			start).Scan(&next); err != nil {
			return err
		}
		if next == nil {
			start = before
		} else {
			start = maxTime(start, next.UTC().Truncate(time.Hour))
		}
		boundary = minTime(start.Add(rollUpSpan), before)
		if start.Before(boundary) {
			if err := rollUpHours(ctx, tx, start, boundary, prefixDrop); err != nil {
				return err
			}
			hours = int(boundary.Sub(start) / time.Hour)
		} else {
			boundary = before
		}
		_, err := tx.Exec(ctx, `UPDATE history_lifecycle SET rolled_before = $1`, boundary)
		return err
	})
	if err != nil {
		return time.Time{}, 0, err
	}
	return boundary, hours, nil
}

// rollUpHours counts the hours of [from, to) afresh. The counts are those Stats,
// FraudConversion and AttemptsSummary make of raw rows, grouped by hour.
func rollUpHours(ctx context.Context, tx pgx.Tx, from, to time.Time, prefixDrop int) error {
	for _, q := range []string{
		`DELETE FROM stats_hourly WHERE hour >= @from AND hour < @to`,
		`INSERT INTO stats_hourly (hour, app_id, kind, reason, n)
			SELECT date_bin('1 hour', created_at, 'epoch'), app_id, status, reason, count(*)
			FROM sends WHERE created_at >= @from AND created_at < @to GROUP BY 1, 2, 3, 4
			UNION ALL
			SELECT date_bin('1 hour', a.created_at, 'epoch'), v.app_id, 'approved', '', count(*)
			FROM attempts a JOIN verifications v ON v.id = a.verification_id
			WHERE a.outcome = 'approved' AND a.created_at >= @from AND a.created_at < @to GROUP BY 1, 2`,
		`DELETE FROM conversion_hourly WHERE hour >= @from AND hour < @to`,
		// Every prefix with a send in the hour has a row, even when none of its sends counts
		// (all failed, say): FraudConversion lists such prefixes too.
		`INSERT INTO conversion_hourly (hour, prefix, prefix_drop, sends, blocked, approvals)
			SELECT hour, prefix, greatest(@drop::int, ` + strconv.Itoa(PrefixKeep) + `), sum(sends), sum(blocked), sum(approvals) FROM (
				SELECT date_bin('1 hour', created_at, 'epoch') AS hour, ` + prefixSQL("phone_prefix", "@drop::int") + ` AS prefix,
					count(*) FILTER (WHERE status IN ('sent', 'sending')) AS sends,
					count(*) FILTER (WHERE status = 'blocked') AS blocked, 0 AS approvals
				FROM sends WHERE created_at >= @from AND created_at < @to AND ` + prefixLongSQL("phone_prefix", "@drop::int") + ` GROUP BY 1, 2
				UNION ALL
				SELECT date_bin('1 hour', t.created_at, 'epoch'), ` + prefixSQL("v.phone_prefix", "@drop::int") + `, 0, 0, count(*)
				FROM attempts t JOIN verifications v ON v.id = t.verification_id
				WHERE t.outcome = 'approved' AND t.created_at >= @from AND t.created_at < @to AND ` + prefixLongSQL("v.phone_prefix", "@drop::int") + `
				GROUP BY 1, 2
			) c GROUP BY hour, prefix`,
		`DELETE FROM attempts_hourly WHERE hour >= @from AND hour < @to`,
		// The sends of verifications, as AttemptsSummary counts them, with what the spent ones
		// among them cost as the Spend page sums it (a priced send always has a verification).
		`INSERT INTO attempts_hourly (hour, app_id, channel, country, prefix, converted, n, cost, priced)
			SELECT date_bin('1 hour', s.created_at, 'epoch'), s.app_id, s.channel, s.country,
				CASE WHEN s.channel = 'email' THEN '' ELSE left(` + storedPrefixSQL("s.phone_prefix") + `, ` + strconv.Itoa(history.MaxAttemptPrefix) + `) END,
				` + convertedSQL + `, count(*),
				coalesce(sum(s.cost) FILTER (WHERE ` + spentSendsOf("s") + `), 0), count(*) FILTER (WHERE ` + spentSendsOf("s") + `)` + sendFrom + `
			WHERE s.verification_id IS NOT NULL AND s.created_at >= @from AND s.created_at < @to
			GROUP BY 1, 2, 3, 4, 5, 6`,
	} {
		if _, err := tx.Exec(ctx, q, pgx.NamedArgs{"from": from, "to": to, "drop": prefixDrop}); err != nil {
			return err
		}
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
