package otp

import (
	"context"
	"errors"
	"time"

	"otpgate/internal/templates"
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

// SMS encodings, as history and metrics name them.
const (
	EncodingGSM7 = "GSM-7"
	EncodingUCS2 = "UCS-2"
)

// MessageParams is what a message's text is rendered from.
type MessageParams struct {
	Channel string
	Locale  string
	Code    string
	// App is the name shown in the message; empty leaves it out.
	App string
	// TTL is how long the code is valid; the text never promises more.
	TTL time.Duration
	// WebOTPDomain, when set, adds the origin-bound last line "@<domain> #<code>" to an SMS.
	WebOTPDomain string
	// AppHash, when set, adds an Android SMS Retriever app hash to an SMS.
	AppHash string
	// Templates are the app's own templates for the locale; empty ones are the built-in ones.
	Templates templates.Message
	// Amount and Payee, when set, are the payment the code confirms (PSD2): the message
	// names them, so the user sees what they approve.
	Amount, Payee string
}

// MessageContent is a rendered message.
type MessageContent struct {
	// Body is the SMS or WhatsApp text, the words a voice call reads, or an email's plain part.
	Body string
	// Subject and HTML are set for email.
	Subject, HTML string
	// Encoding (EncodingGSM7 or EncodingUCS2) and Segments describe an SMS; empty for other channels.
	Encoding string
	Segments int
}

// Renderer writes messages from templates; internal/message implements it.
type Renderer interface {
	// Render fills in the channel's template for the locale, or the app's own template in
	// p.Templates. Errors: *ErrInvalidRequest naming "locale" when there is no template
	// for it, and errors of a template that does not run.
	Render(p MessageParams) (MessageContent, error)
	// HasLocale reports whether there are templates for the locale.
	HasLocale(locale string) bool
}
