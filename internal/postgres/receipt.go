package postgres

import (
	"context"
	"fmt"
	"time"

	"otpgate/internal/otp"
)

var _ otp.ReceiptStore = (*Store)(nil)

// MarkDelivery implements otp.ReceiptStore: one UPDATE that only touches a send of the
// receipt's provider that has no receipt yet, so replays and late, out-of-order reports
// change nothing.
func (s *Store) MarkDelivery(ctx context.Context, r otp.Receipt) (bool, error) {
	if r.Status != otp.DeliveryDelivered && r.Status != otp.DeliveryUndelivered {
		return false, fmt.Errorf("postgres: mark delivery: %w: status %q", errBug, r.Status)
	}
	if err := otp.CheckTextIn("receipt", r); err != nil {
		return false, fmt.Errorf("postgres: mark delivery: %w", err)
	}
	// A quick provider may report before the outcome writer has stored the provider's
	// message id (it writes within 100 ms); writing what is queued first means such a
	// receipt still finds its send instead of being dropped as unknown.
	if s.Outcomes != nil {
		if err := s.Outcomes.Flush(ctx); err != nil {
			return false, fmt.Errorf("postgres: mark delivery: %w", err)
		}
	}
	const set = `UPDATE sends SET delivery = $3, delivery_error = $4, delivered_at = $5, updated_at = greatest(updated_at, $5)
		WHERE provider = $1 AND delivery = '' AND verification_id IS NOT NULL AND `
	q, key := set+`provider_message_id = $2`, r.ProviderID
	switch {
	case r.ProviderID != "":
	case validID(r.SendID):
		q, key = set+`id = $2::uuid`, r.SendID
	default:
		return false, nil // names no send that can exist
	}
	// sends is partitioned by day of created_at: the send is looked for first among the days
	// before the receipt (receiptLookback), then, for a late or replayed receipt, among all.
	tag, err := s.pool.Exec(ctx, q+` AND created_at >= $6 AND created_at < $7`, r.Provider, key, r.Status, r.Error, r.Time,
		r.Time.Add(-receiptLookback), r.Time.Add(sendMargin))
	if err == nil && tag.RowsAffected() == 0 {
		tag, err = s.pool.Exec(ctx, q, r.Provider, key, r.Status, r.Error, r.Time)
	}
	if err != nil {
		return false, wrap("mark delivery", err)
	}
	return tag.RowsAffected() > 0, nil
}

// receiptLookback is how long before its receipt a send is looked for first: providers
// report within minutes, and retry a report for a day or two at most.
const receiptLookback = 3 * 24 * time.Hour
