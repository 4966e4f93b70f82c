package otp

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Channels a code can go out on. A message with no channel is an SMS.
const (
	ChannelSMS      = "sms"
	ChannelWhatsApp = "whatsapp"
	ChannelVoice    = "voice"
	ChannelEmail    = "email"
)

// channels are every channel, in the order documentation and errors name them. An
// array, so no caller can change the list: Channels hands out copies.
var channels = [...]string{ChannelSMS, ChannelWhatsApp, ChannelVoice, ChannelEmail}

// Channels lists every channel, in the order documentation and errors name them. The
// slice is a fresh copy, the caller's to keep or change.
func Channels() []string { return slices.Clone(channels[:]) }

// ChannelOf is m's channel: sms when unset, so senders written before channels
// existed keep their meaning.
func ChannelOf(m Message) string {
	if m.Channel == "" {
		return ChannelSMS
	}
	return m.Channel
}

// ProviderOutcome is how one provider's try at a message ended.
type ProviderOutcome string

// Provider outcomes. Only ProviderFailed means that provider certainly sent nothing;
// ProviderSkipped means it was not asked at all (its circuit breaker was open).
const (
	ProviderSent    ProviderOutcome = "sent"
	ProviderFailed  ProviderOutcome = "failed"
	ProviderUnknown ProviderOutcome = "unknown"
	ProviderSkipped ProviderOutcome = "skipped"
)

// ProviderAttempt is one provider's try at delivering a message, as history and metrics record it.
type ProviderAttempt struct {
	// Provider is the provider instance's name, such as "twilio" or "backup".
	Provider   string
	Outcome    ProviderOutcome
	ProviderID string
	// Error is the provider's error; it never holds the code.
	Error    string
	Start    time.Time
	Duration time.Duration
}

// Delivery is what handing a message to its providers produced.
type Delivery struct {
	// Provider is the instance that took the message, or the last one tried.
	Provider   string
	ProviderID string
	// Attempts lists every provider asked (or skipped), in order.
	Attempts []ProviderAttempt
}

// Deliverer is a Sender that may try several providers for one message and reports
// each try; internal/delivery's router is one.
type Deliverer interface {
	Sender
	// Deliver sends m like Send and returns every attempt, also together with an error.
	// The error wraps ErrNotDelivered only when no attempt can have delivered it.
	Deliver(ctx context.Context, m Message) (Delivery, error)
}

// Deliver hands m to s and returns its attempts: a Deliverer's own, or else the one
// attempt that s.Send made.
func Deliver(ctx context.Context, s Sender, m Message) (Delivery, error) {
	if d, ok := s.(Deliverer); ok {
		return d.Deliver(ctx, m)
	}
	start := time.Now()
	id, err := s.Send(ctx, m)
	a := ProviderAttempt{Provider: s.Name(), Outcome: ProviderOutcomeOf(err), ProviderID: id, Start: start.UTC(), Duration: time.Since(start)}
	if err != nil {
		a.Error = err.Error()
	}
	return Delivery{Provider: a.Provider, ProviderID: id, Attempts: []ProviderAttempt{a}}, err
}

// ProviderOutcomeOf classifies a sender's error: nil is sent, ErrNotDelivered failed,
// anything else unknown.
func ProviderOutcomeOf(err error) ProviderOutcome {
	switch {
	case err == nil:
		return ProviderSent
	case errors.Is(err, ErrNotDelivered):
		return ProviderFailed
	default:
		return ProviderUnknown
	}
}
