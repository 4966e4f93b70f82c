package otp

import (
	"context"
	"errors"
	"time"
)

// ErrNotDelivered marks a sender error as definite: the provider refused the
// message before sending it, so it will never arrive. Senders wrap it; any other
// error means delivery is unknown (a timeout, a 5xx).
var ErrNotDelivered = errors.New("message not delivered")

// Message is one SMS, rendered and ready to go.
type Message struct {
	// ID is the send's id; providers that support it use it to drop duplicates.
	ID        string
	To        string // E.164
	Body      string
	Locale    string
	CreatedAt time.Time
}

// Sender delivers SMS. Implementations live in internal/sms.
type Sender interface {
	// Send hands the message to the provider and returns the provider's message id
	// (empty when it gave none). Errors wrap ErrNotDelivered when delivery definitely failed.
	Send(ctx context.Context, m Message) (providerID string, err error)
	// Name is the provider's name for history and metrics, such as "twilio".
	Name() string
}
