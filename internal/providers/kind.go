// Package providers is the registry of provider kinds. Each kind (log, webhook, twilio,
// the other SMS vendors, smtp) is one file that declares the channels it can carry, the
// variables an instance of it reads, how an instance is built and whether it takes
// delivery callbacks; Kinds lists them. The config checks, the building of instances and the router's table of providers
// are all read from that one table.
//
// The registry sits between the wiring (internal/server) and the packages it draws on: it
// imports the senders (internal/sms, internal/email) and hands the router
// (internal/delivery) plain delivery.Provider values, so the router knows providers by
// name and channels only, never by kind.
package providers

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
	"otpgate/internal/outbound"
	"otpgate/internal/receipt"
	"otpgate/internal/tracing"
)

// Kind is one kind of provider instance.
type Kind struct {
	// Name is the kind as SMS_PROVIDERS spells it, and the {kind} of its receipt route.
	Name string
	// Channels are the channels an instance of the kind can carry; one may be set up for
	// fewer (a Twilio account without a WhatsApp number), see Built.
	Channels []string
	// Settings are the variables an instance reads, named without the instance's suffix.
	Settings []Setting
	// Check refuses settings that no single variable's rule catches, before the required
	// variables are checked; nil checks nothing more.
	Check func(Settings) error
	// Receipts says that an instance may take delivery callbacks at
	// /v1/receipts/<kind>/<instance>; New then returns its reader.
	Receipts bool
	// New builds an instance from settings that Read has checked. Errors name the
	// variable at fault.
	New func(s Settings, o Options) (Built, error)
}

// Setting is one variable of a kind.
type Setting struct {
	// Name is the variable without the instance's suffix, such as SMS_WEBHOOK_URL.
	Name string
	// Required stops start-up, naming the variable, when it is empty.
	Required bool
	// Default is the value of an empty variable.
	Default string
	// Example is a well-formed value; the registry's tests build every kind from them.
	Example string
	// Outbound marks a URL otpgate connects to: CheckOutbound holds it to the outbound
	// address policy at start-up, and the instance's client at every connection.
	Outbound bool
}

// Options are what every instance is built with beyond its own settings.
type Options struct {
	// Log is where the log sender writes.
	Log *slog.Logger
	// ShowCodes lets the log sender write codes as they are: for dev mode only.
	ShowCodes bool
	// Timeout is SMS_TIMEOUT, the backstop of a sender's own HTTP client.
	Timeout time.Duration
	// PublicURL is OTP_PUBLIC_URL, where providers reach otpgate; empty asks providers
	// that report by callback for none.
	PublicURL string
	// Outbound is the address policy the HTTP kinds' clients connect under; the zero
	// value refuses loopback, private, link-local and other special addresses.
	Outbound outbound.Policy
	// Tracer makes a client span of every request of the HTTP kinds and sends its
	// traceparent to the provider (docs/traces.md); nil traces nothing.
	Tracer trace.TracerProvider
}

// callbackURL is where a provider posts the delivery callbacks of one instance, or ""
// without a public URL.
func (o Options) callbackURL(kind, instance string) string {
	if o.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(o.PublicURL, "/") + "/v1/receipts/" + kind + "/" + instance
}

// httpClient is the client an HTTP kind sends through: under the outbound address policy,
// each request traced.
func (o Options) httpClient() *http.Client { return tracing.Client(o.Tracer, o.Outbound.Client()) }

// readingReceipts is a sender that reads its own delivery callbacks.
type readingReceipts interface {
	otp.Sender
	receipt.Reader
}

// builtReading is the instance of such a sender: it reads callbacks when it asked for them,
// which is when callback is not empty.
func builtReading(sender readingReceipts, callback string) Built {
	b := Built{Provider: delivery.Provider{Sender: sender}}
	if callback != "" {
		b.Receipts = sender
	}
	return b
}

// checkOneOf refuses a value of setting name that is not one of choices.
func checkOneOf(s Settings, name string, choices []string) error {
	if v := s.Get(name); !slices.Contains(choices, v) {
		return fmt.Errorf("%s=%q: must be %s", s.Var(name), v, strings.Join(choices, ", "))
	}
	return nil
}

// Built is one instance made ready: the router's entry for it, and its receipt reader.
type Built struct {
	// Provider is what the router knows of the instance. Build sets its Name; Channels
	// left nil are every channel of the kind.
	delivery.Provider
	// Receipts reads the instance's delivery callbacks; nil when it takes none.
	Receipts receipt.Reader
}
