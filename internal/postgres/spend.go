package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"otpgate/internal/events"
	"otpgate/internal/otp"
	"otpgate/internal/spend"
)

var _ spend.Store = (*Store)(nil)

// RecordBudgetThreshold implements spend.Store: one row per subscribed endpoint, in no
// order (no subject); the event id comes from key, so a second record writes nothing.
func (s *Store) RecordBudgetThreshold(ctx context.Context, key string, d events.BudgetThresholdData, at time.Time) error {
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("postgres: record budget threshold: %w", err)
	}
	var app *string
	if d.AppID != "" {
		if !validID(d.AppID) {
			return nil // no endpoint belongs to an app id of another shape
		}
		app = &d.AppID
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO event_outbox (event_id, endpoint_id, type, data, created_at, next_attempt_at)
		SELECT $1, w.id, $2, $3::jsonb, $4, $4 FROM webhook_endpoints w
		WHERE $2 = ANY(w.event_types) AND ($5::uuid IS NULL OR w.app_id = $5::uuid)
		ON CONFLICT DO NOTHING`, events.EventID(events.BudgetThreshold, key), events.BudgetThreshold, string(data), at, app)
	return wrap("record budget threshold", err)
}

// spentSends are the sends that cost something: priced, and not failed (a failed send's
// row keeps its estimate, but nothing went out).
const spentSends = `cost > 0 AND status <> 'failed'`

// spentSendsOf is spentSends of the sends named alias.
func spentSendsOf(alias string) string {
	return alias + `.cost > 0 AND ` + alias + `.status <> 'failed'`
}

// rolledSpendSQL are the conditions on attempts_hourly for the rolled-up part of [$1, $2):
// the hours before the rolled-up boundary that overlap the range, each counted whole (a
// range starting inside an hour, such as a budget window in a half-hour time zone, counts
// that hour's rolled-up spend in full). Raw rows count from the boundary on, both in one
// statement's snapshot, so a figure is the same before, during and after a purge.
const rolledSpendSQL = `priced > 0 AND hour > $1::timestamptz - interval '1 hour' AND hour < $2::timestamptz
	AND hour < (` + rolledBeforeSQL + `)`

// SpendByDay implements spend.Store: raw sends from the rolled-up boundary on, the hourly
// rollups before it, as the charts read.
func (s *Store) SpendByDay(ctx context.Context, from, to time.Time) ([]spend.DayTotal, error) {
	rows, _ := s.pool.Query(ctx, `SELECT day, app_id::text, country, sum(cost)::bigint, sum(n)::bigint FROM (
			SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, app_id, country, sum(cost) AS cost, count(*) AS n
			FROM sends WHERE created_at >= $1::timestamptz AND created_at >= (`+rolledBeforeSQL+`) AND created_at < $2::timestamptz
				AND `+spentSends+` GROUP BY 1, 2, 3
			UNION ALL
			SELECT date_trunc('day', hour AT TIME ZONE 'UTC'), app_id, country, sum(cost), sum(priced)
			FROM attempts_hourly WHERE `+rolledSpendSQL+` GROUP BY 1, 2, 3
		) t GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, from, to)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (spend.DayTotal, error) {
		var d spend.DayTotal
		err := r.Scan(&d.Day, &d.AppID, &d.Country, &d.Cost, &d.Sends)
		d.Day = time.Date(d.Day.Year(), d.Day.Month(), d.Day.Day(), 0, 0, 0, 0, time.UTC)
		return d, err
	})
	return out, wrap("spend by day", err)
}

// TopPrefixes implements spend.Store; the stored prefix keeps no finer prefix than
// PrefixKeep digits short of the number. It reads raw sends alone: the Spend page asks for the
// last 24 hours, and history is kept at least a day, so they are never rolled up.
func (s *Store) TopPrefixes(ctx context.Context, from time.Time, drop, limit int) ([]spend.PrefixTotal, error) {
	prefix := storedPrefixSQL("phone_prefix")
	rows, _ := s.pool.Query(ctx, `SELECT left(`+prefix+`, greatest(length(`+prefix+`) - `+extraDrop("$2::int")+`, 2)), country, sum(cost)::bigint, count(*)
		FROM sends WHERE created_at >= $1 AND channel <> 'email' AND `+spentSends+`
		GROUP BY 1, 2 ORDER BY 3 DESC, 1 LIMIT $3`, from, drop, limit)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (spend.PrefixTotal, error) {
		var p spend.PrefixTotal
		return p, r.Scan(&p.Prefix, &p.Country, &p.Cost, &p.Sends)
	})
	return out, wrap("top prefixes", err)
}

// SpentSince implements spend.Store, reading rollups before the boundary as SpendByDay does.
func (s *Store) SpentSince(ctx context.Context, from time.Time, app, country string) (spend.Micros, error) {
	if app != "" && !validID(otp.StoredAppID(app)) {
		return 0, nil // no send belongs to an app id of another shape
	}
	var sum spend.Micros
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(c), 0)::bigint FROM (
			SELECT sum(cost) AS c FROM sends
			WHERE created_at >= $1::timestamptz AND created_at >= (`+rolledBeforeSQL+`) AND `+spentSends+`
				AND ($3 = '' OR app_id::text = $3) AND ($4 = '' OR country = $4)
			UNION ALL
			SELECT sum(cost) FROM attempts_hourly WHERE `+rolledSpendSQL+`
				AND ($3 = '' OR app_id::text = $3) AND ($4 = '' OR country = $4)
		) t`, from, pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}, storedApp(app), country).Scan(&sum)
	return sum, wrap("spent since", err)
}

// storedApp is the app id as sends keep it; empty stays empty (every app).
func storedApp(app string) string {
	if app == "" {
		return ""
	}
	return otp.StoredAppID(app)
}
