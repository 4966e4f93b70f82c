package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/history"
)

// DeliveryRates implements history.DeliveryRater with one grouped scan of the range's sends
// (an index range of sends_created_idx, or sends_app_created_idx for one app).
func (s *Store) DeliveryRates(ctx context.Context, since time.Time, appID string) ([]history.DeliveryRate, error) {
	q := `SELECT channel, country, provider, count(*),
			count(*) FILTER (WHERE status = 'sent'),
			count(*) FILTER (WHERE delivery = 'delivered'),
			count(*) FILTER (WHERE delivery = 'undelivered'),
			coalesce(sum(segments) FILTER (WHERE status = 'sent'), 0)
		FROM sends WHERE verification_id IS NOT NULL AND created_at >= $1`
	args := []any{ceilMicro(since)}
	if appID != "" {
		if !validID(appID) {
			return nil, nil
		}
		q += ` AND app_id = $2`
		args = append(args, appID)
	}
	rows, _ := s.pool.Query(ctx, q+` GROUP BY channel, country, provider`, args...)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.DeliveryRate, error) {
		var d history.DeliveryRate
		err := r.Scan(&d.Channel, &d.Country, &d.Provider, &d.Sends, &d.Sent, &d.Delivered, &d.Undelivered, &d.Segments)
		return d, err
	})
	if err != nil {
		return nil, wrap("delivery rates", err)
	}
	history.SortDeliveryRates(out)
	return out, nil
}
