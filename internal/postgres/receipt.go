package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

var _ receipt.Store = (*Store)(nil)

// MarkDelivery implements receipt.Store: one statement that only touches a send of
// the receipt's provider that has no receipt yet, or, for a receipt with a price, no
// price yet, so replays and late, out-of-order reports change nothing. It locks the rows
// first (markDeliverySQL) to answer what it changed from their state before.
func (s *Store) MarkDelivery(ctx context.Context, r receipt.Receipt) (receipt.Marked, error) {
	if r.Status != receipt.DeliveryDelivered && r.Status != receipt.DeliveryUndelivered {
		return receipt.Marked{}, fmt.Errorf("postgres: mark delivery: %w: status %q", errBug, r.Status)
	}
	if err := otp.CheckTextIn("receipt", r); err != nil {
		return receipt.Marked{}, fmt.Errorf("postgres: mark delivery: %w", err)
	}
	// A quick provider may report before the outcome writer has stored the provider's
	// message id (it writes within 100 ms); writing what is queued first means such a
	// receipt still finds its send instead of being dropped as unknown.
	if s.Outcomes != nil {
		if err := s.Outcomes.Flush(ctx); err != nil {
			return receipt.Marked{}, fmt.Errorf("postgres: mark delivery: %w", err)
		}
	}
	q, cond, key := markDeliverySQL, `provider_message_id = $2`, r.ProviderID
	switch {
	case r.ProviderID != "":
	case validID(r.SendID):
		cond, key = `id = $2::uuid`, r.SendID
	default:
		return receipt.Marked{}, nil // names no send that can exist
	}
	// sends is partitioned by day of created_at: the send is looked for first among the days
	// before the receipt (receiptLookback), then, for a late or replayed receipt, among all.
	args := []any{r.Provider, key, r.Status, r.Error, r.Time, r.Price.Micros, r.Price.Currency}
	out, err := s.markDelivery(ctx, fmt.Sprintf(q, cond+` AND created_at >= $8 AND created_at < $9`),
		append(args, r.Time.Add(-receiptLookback), r.Time.Add(sendMargin)))
	if err == nil && !out.Settled && !out.Priced {
		out, err = s.markDelivery(ctx, fmt.Sprintf(q, cond), args)
	}
	if err != nil {
		return receipt.Marked{}, wrap("mark delivery", err)
	}
	return out, nil
}

// markDelivery runs one markDeliverySQL and gathers what it changed.
func (s *Store) markDelivery(ctx context.Context, q string, args []any) (receipt.Marked, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return receipt.Marked{}, wrap("mark delivery", err)
	}
	var out receipt.Marked
	var m receipt.Marked
	_, err = pgx.ForEachRow(rows, []any{&m.Settled, &m.Priced, &m.App, &m.Country, &m.Channel}, func() error {
		out.Settled = out.Settled || m.Settled
		if m.Priced && !out.Priced {
			out.Priced, out.App, out.Country, out.Channel = true, m.App, m.Country, m.Channel
		}
		return nil
	})
	if err != nil {
		return receipt.Marked{}, wrap("mark delivery", err)
	}
	return out, nil
}

// markDeliverySQL settles the matching sends (the %s condition on $2) that have no
// receipt yet and records the price ($6 micros of $7) on those that have none, answering
// per send what it changed. The rows are locked in the CTE, so a concurrent receipt waits
// and then sees this one's work: a send is settled and priced once.
const markDeliverySQL = `WITH old AS (
		SELECT id, created_at, delivery = '' AS settles, actual_currency = '' AND $7 <> '' AS prices FROM sends
		WHERE provider = $1 AND verification_id IS NOT NULL AND %s
			AND (delivery = '' OR (actual_currency = '' AND $7 <> ''))
		FOR UPDATE)
	UPDATE sends s SET
		delivery = CASE WHEN old.settles THEN $3 ELSE s.delivery END,
		delivery_error = CASE WHEN old.settles THEN $4 ELSE s.delivery_error END,
		delivered_at = CASE WHEN old.settles THEN $5 ELSE s.delivered_at END,
		actual_cost = CASE WHEN old.prices THEN $6 ELSE s.actual_cost END,
		actual_currency = CASE WHEN old.prices THEN $7 ELSE s.actual_currency END,
		updated_at = greatest(s.updated_at, $5)
	FROM old WHERE s.id = old.id AND s.created_at = old.created_at
	RETURNING old.settles, old.prices, s.app_id::text, s.country, s.channel`

// receiptLookback is how long before its receipt a send is looked for first: providers
// report within minutes, and retry a report for a day or two at most.
const receiptLookback = 3 * 24 * time.Hour
