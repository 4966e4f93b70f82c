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

// Message is one message (an SMS unless Channel says otherwise), rendered and ready to go.
type Message struct {
	// ID is the send's id; providers that support it use it to drop duplicates.
	ID string
	// Channel is sms, whatsapp, voice or email; empty means sms.
	Channel string
	// To is the address: E.164 for the phone channels, an email address for email.
	To string
	// Country is the ISO 3166 region of a phone number, for routing; empty for email.
	Country string
	// Body is the text: the SMS or WhatsApp text, what a voice call reads, an email's plain part.
	Body string
	// Subject and HTML are an email's subject and HTML part.
	Subject, HTML string
	// Code is the code alone, for providers that render their own text (a WhatsApp
	// content template). Never log it.
	Code      string
	Locale    string
	CreatedAt time.Time
	// Encoding and Segments describe an SMS as rendered (see MessageContent).
	Encoding string
	Segments int
}

// Sender delivers messages. Implementations live in internal/sms and internal/email;
// internal/delivery routes between them.
type Sender interface {
	// Send hands the message to the provider and returns the provider's message id
	// (empty when it gave none). Errors wrap ErrNotDelivered when delivery definitely failed.
	Send(ctx context.Context, m Message) (providerID string, err error)
	// Name is the provider's name for history and metrics, such as "twilio".
	Name() string
}
