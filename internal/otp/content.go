package otp

import (
	"otpgate/internal/templates"
	"time"
)

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
