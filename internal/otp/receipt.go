package otp

import (
	"context"
	"time"
)

// Delivery states a receipt can report. They live beside a send's status rather than
// in it: "sent" says the provider took the message, a receipt says what the handset did.
const (
	DeliveryDelivered   = "delivered"
	DeliveryUndelivered = "undelivered"
)

// Receipt is a provider's report of what became of one message.
type Receipt struct {
	// Provider is the instance the receipt came from; only its own sends match.
	Provider string
	// ProviderID names the send by the provider's message id (Twilio's SID); when
	// empty, SendID names it by otpgate's own id (what the webhook receiver got as "id").
	ProviderID string
	SendID     string
	// Status is DeliveryDelivered or DeliveryUndelivered.
	Status string
	// Error is the provider's reason for an undelivered message, such as "30003".
	Error string
	Time  time.Time
}

// ReceiptStore records delivery receipts; internal/postgres and internal/inmem implement it.
type ReceiptStore interface {
	// MarkDelivery records r on the send it names, once: the first receipt that settles
	// a send wins and later ones (replays, out-of-order updates) change nothing. It
	// returns whether the send changed; an unknown send is false with no error.
	MarkDelivery(ctx context.Context, r Receipt) (bool, error)
}
