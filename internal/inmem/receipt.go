package inmem

import (
	"context"
	"fmt"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

var _ receipt.Store = (*Store)(nil)

// MarkDelivery implements receipt.Store.
func (s *Store) MarkDelivery(ctx context.Context, r receipt.Receipt) (receipt.Marked, error) {
	if err := alive("mark delivery", ctx); err != nil {
		return receipt.Marked{}, err
	}
	if r.Status != receipt.DeliveryDelivered && r.Status != receipt.DeliveryUndelivered {
		return receipt.Marked{}, fmt.Errorf("inmem: mark delivery: invalid use of the store: status %q", r.Status)
	}
	if err := otp.CheckTextIn("receipt", r); err != nil {
		return receipt.Marked{}, fmt.Errorf("inmem: mark delivery: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out receipt.Marked
	for _, row := range s.matching(r) {
		if row.Provider != r.Provider || row.VerificationID == "" {
			continue
		}
		settles, prices := row.Delivery == "", row.ActualCurrency == "" && r.Price.Currency != ""
		if settles {
			row.Delivery, row.DeliveryError, row.DeliveredAt = r.Status, r.Error, ts(r.Time)
			out.Settled = true
		}
		if prices {
			row.ActualCost, row.ActualCurrency = r.Price.Micros, r.Price.Currency
			if !out.Priced {
				out.Priced, out.App, out.Country, out.Channel = true, otp.StoredAppID(row.AppID), row.Country, row.Channel
			}
		}
		if (settles || prices) && r.Time.After(row.Updated) {
			row.Updated = ts(r.Time)
		}
	}
	return out, nil
}

// matching returns the sends a receipt names: by provider message id, else by send id.
func (s *Store) matching(r receipt.Receipt) []*history.SendRow {
	if r.ProviderID == "" {
		id, ok := canonID(r.SendID)
		if row := s.sends[id]; ok && row != nil {
			return []*history.SendRow{row}
		}
		return nil
	}
	var out []*history.SendRow
	for _, row := range s.sends {
		if row.ProviderMessageID == r.ProviderID {
			out = append(out, row)
		}
	}
	return out
}
