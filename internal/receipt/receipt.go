// Package receipt is the delivery receipts use case: providers' callbacks, authenticated
// by a reader per provider instance, become receipts that the store records once on the
// send they name, settling its delivery and its actual price. It speaks the kernel's
// vocabulary (internal/otp) and is wired to the stores, the providers and the public API.
package receipt

import (
	"context"
	"fmt"
	"log/slog"
	"net/textproto"
	"time"

	"otpgate/internal/otp"
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
	// Price is what the provider reported the message actually cost (Twilio's Price and
	// PriceUnit); its Currency is empty when the receipt reports none.
	Price Price
	// PriceIgnored says why a price the callback carried was not read, such as "Price is
	// not a decimal amount"; the receipt counts all the same. Fixed text, never the value.
	PriceIgnored string
}

// Price is an amount a provider charged, in micro-units of Currency (an ISO 4217 code,
// which may differ from the price table's).
type Price struct {
	Micros   int64
	Currency string
}

// Marked is what MarkDelivery changed on the send a receipt names.
type Marked struct {
	// Settled is true when the receipt settled the send's delivery.
	Settled bool
	// Priced is true when the receipt recorded the send's actual price, which happens
	// once, whether or not it settled the send: a provider may report the price later
	// than the delivery. App (the stored app id), Country and Channel name the send then.
	Priced                bool
	App, Country, Channel string
}

// Store records delivery receipts; internal/postgres and internal/inmem implement it.
type Store interface {
	// MarkDelivery records r on the send it names, once: the first receipt that settles
	// a send wins and later ones (replays, out-of-order updates) change nothing; the
	// first receipt that carries a price records it. It returns what changed; an unknown
	// send changes nothing, with no error.
	MarkDelivery(ctx context.Context, r Receipt) (Marked, error)
}

// Callback is a provider's delivery callback as it arrived.
type Callback struct {
	// URI is the path and query the provider posted to.
	URI    string
	Header textproto.MIMEHeader
	// Body is the raw body, which signatures cover.
	Body []byte
}

// ErrBadSignature means a callback's signature is missing, wrong or too old: it may be
// forged or replayed, so it changed nothing.
var ErrBadSignature = otp.Errorf(otp.CodeInvalidSignature, "the callback's signature is missing, wrong or too old")

// Reader authenticates one provider instance's delivery callbacks and reads the
// receipts they report; internal/sms implements it for Twilio and the webhook.
type Reader interface {
	// ReadReceipt checks the callback's signature and reads its receipt, with Provider
	// and Time set; ok is false for a genuine callback that reports no final state (a
	// step such as "queued"). Errors: ErrBadSignature, *ErrInvalidRequest for a body
	// that breaks the callback's contract.
	ReadReceipt(c Callback, now time.Time) (r Receipt, ok bool, err error)
}

// BatchReader is a Reader whose callbacks may report several messages at once, as
// Infobip's delivery reports do (a "results" array); Receive records each of them.
type BatchReader interface {
	Reader
	// ReadReceipts checks the callback's signature and reads every final state it
	// reports, each with Provider and Time set; steps are left out, so none is no error.
	// Errors are ReadReceipt's, for the callback as a whole.
	ReadReceipts(c Callback, now time.Time) ([]Receipt, error)
}

// Receiver takes providers' delivery callbacks; *Receipts implements it.
type Receiver interface {
	// Receive authenticates the callback of the named source ("twilio/<instance>" or
	// "webhook/<instance>") and records its receipt once: the first receipt that settles
	// a send wins, so a replay changes nothing. Errors: ErrNotFound for a source that is
	// not configured, ErrBadSignature, *ErrInvalidRequest, *ErrInvalidText (a NUL or
	// invalid UTF-8 in the receipt), and errors wrapping ErrUnavailable.
	Receive(ctx context.Context, source string, c Callback) error
}

// Receipts records delivery receipts from the callbacks of the configured provider instances.
type Receipts struct {
	readers map[string]Reader
	store   Store

	// Now is the receipts' clock; tests replace it.
	Now func() time.Time
	// Timeout bounds one store call; 0 sets none.
	Timeout time.Duration
	// Log takes the one warning about a price a genuine callback carried but that could
	// not be read; nil logs nothing.
	Log *slog.Logger
}

var _ Receiver = (*Receipts)(nil)

// New returns a receiver over store for the readers, by source name.
func New(store Store, readers map[string]Reader) *Receipts {
	return &Receipts{readers: readers, store: store, Now: func() time.Time { return time.Now().UTC() }}
}

// Receive implements Receiver. A BatchReader's receipts are checked before any is
// recorded, then recorded one by one; the first store error stops the rest, and the
// provider's retry of the whole callback finds the recorded ones settled.
func (s *Receipts) Receive(ctx context.Context, source string, c Callback) error {
	reader, found := s.readers[source]
	if !found {
		return fmt.Errorf("otp: receipt: source %q: %w", source, otp.ErrNotFound)
	}
	var rs []Receipt
	if batch, ok := reader.(BatchReader); ok {
		var err error
		if rs, err = batch.ReadReceipts(c, s.Now()); err != nil {
			return err
		}
	} else {
		r, ok, err := reader.ReadReceipt(c, s.Now())
		if err != nil || !ok {
			return err
		}
		rs = []Receipt{r}
	}
	for _, r := range rs {
		if err := otp.CheckTextIn("receipt", r); err != nil {
			// Whatever a reader let through, no store is asked to find or keep such text.
			return err
		}
	}
	for _, r := range rs {
		if err := s.record(ctx, source, r); err != nil {
			return err
		}
	}
	return nil
}

// record stores one checked receipt.
func (s *Receipts) record(ctx context.Context, source string, r Receipt) error {
	if r.PriceIgnored != "" && s.Log != nil {
		// A signed callback with a price that cannot be read is the provider's bug or a
		// change of its format: the delivery still counts, and an operator should know.
		s.Log.Warn("receipt: the provider's price is ignored", "source", source, "problem", r.PriceIgnored)
	}
	ctx, cancel := otp.Bounded(ctx, s.Timeout)
	defer cancel()
	if _, err := s.store.MarkDelivery(ctx, r); err != nil {
		return fmt.Errorf("otp: receipt: %w", err)
	}
	return nil
}
