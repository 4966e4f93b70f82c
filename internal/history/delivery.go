package history

import (
	"cmp"
	"context"
	"slices"
	"time"

	"otpgate/internal/otp"
)

// DeliveryRate counts the sends of one channel, country and provider and what their
// delivery receipts said, for the console's delivery view.
type DeliveryRate struct {
	Channel string
	// Country is the numbers' ISO 3166 region; empty for email.
	Country string
	// Provider is the provider instance that took the message or was tried last.
	Provider string
	// Sends counts sends handed to providers: sent, failed, unknown or still sending.
	Sends int
	// Sent counts sends a provider took.
	Sent int
	// Delivered and Undelivered count receipts.
	Delivered, Undelivered int
	// Segments sums the SMS segments of the sent messages (what providers bill).
	Segments int
}

// Rate is Delivered out of the receipts that came (Delivered + Undelivered); ok is false
// while none came, as for providers that send no receipts.
func (r DeliveryRate) Rate() (rate float64, ok bool) {
	n := r.Delivered + r.Undelivered
	if n == 0 {
		return 0, false
	}
	return float64(r.Delivered) / float64(n), true
}

// SortDeliveryRates orders rates by channel (in the order of otp.Channels), country and provider.
func SortDeliveryRates(rates []DeliveryRate) {
	channels := otp.Channels()
	slices.SortFunc(rates, func(a, b DeliveryRate) int {
		return cmp.Or(
			cmp.Compare(slices.Index(channels, a.Channel), slices.Index(channels, b.Channel)),
			cmp.Compare(a.Country, b.Country),
			cmp.Compare(a.Provider, b.Provider),
		)
	})
}

// DeliveryRater answers the console's delivery view; the history stores implement it.
type DeliveryRater interface {
	// DeliveryRates counts the sends handed to providers since since (of one app, or of
	// all for appID ""), per channel, country and provider, sorted by SortDeliveryRates.
	DeliveryRates(ctx context.Context, since time.Time, appID string) ([]DeliveryRate, error)
}
