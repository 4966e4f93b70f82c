package inmem

import (
	"context"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// DeliveryRates implements history.DeliveryRater.
func (s *Store) DeliveryRates(ctx context.Context, since time.Time, appID string) ([]history.DeliveryRate, error) {
	if err := alive("delivery rates", ctx); err != nil {
		return nil, err
	}
	type key struct{ channel, country, provider string }
	s.mu.Lock()
	defer s.mu.Unlock()
	by := map[key]*history.DeliveryRate{}
	for _, r := range s.sends {
		if r.VerificationID == "" || r.Time.Before(since) || (appID != "" && r.AppID != appID) {
			continue
		}
		k := key{r.Channel, r.Country, r.Provider}
		d := by[k]
		if d == nil {
			d = &history.DeliveryRate{Channel: k.channel, Country: k.country, Provider: k.provider}
			by[k] = d
		}
		d.Sends++
		if r.SendStatus == otp.SendSent {
			d.Sent++
			d.Segments += r.Segments
		}
		switch r.Delivery {
		case receipt.DeliveryDelivered:
			d.Delivered++
		case receipt.DeliveryUndelivered:
			d.Undelivered++
		}
	}
	out := make([]history.DeliveryRate, 0, len(by))
	for _, d := range by {
		out = append(out, *d)
	}
	history.SortDeliveryRates(out)
	return out, nil
}
