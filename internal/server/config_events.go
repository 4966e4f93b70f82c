package server

import (
	"fmt"
	"time"

	"otpgate/internal/events"
)

// EventSettings are the variables of event delivery and the expiry job (docs/events.md).
type EventSettings struct {
	EventsRetryFor   time.Duration `env:"OTP_EVENTS_RETRY_FOR" envDefault:"24h"`
	EventsBackoff    time.Duration `env:"OTP_EVENTS_BACKOFF" envDefault:"10s"`
	EventsBackoffMax time.Duration `env:"OTP_EVENTS_BACKOFF_MAX" envDefault:"1h"`
	EventsTimeout    time.Duration `env:"OTP_EVENTS_TIMEOUT" envDefault:"10s"`
	EventsPoll       time.Duration `env:"OTP_EVENTS_POLL_INTERVAL" envDefault:"1s"`
	// ExpireInterval is how often the expiry job closes verifications and fraud blocks that ran out.
	ExpireInterval time.Duration `env:"OTP_EXPIRE_INTERVAL" envDefault:"15s"`
}

// checkEvents refuses event settings the dispatcher could not honour.
func (c *config) checkEvents() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"OTP_EVENTS_RETRY_FOR", c.EventsRetryFor}, {"OTP_EVENTS_BACKOFF", c.EventsBackoff}, {"OTP_EVENTS_BACKOFF_MAX", c.EventsBackoffMax},
		{"OTP_EVENTS_TIMEOUT", c.EventsTimeout}, {"OTP_EVENTS_POLL_INTERVAL", c.EventsPoll}, {"OTP_EXPIRE_INTERVAL", c.ExpireInterval}} {
		if d.v <= 0 {
			return fmt.Errorf("config: %s=%s: must be positive", d.name, d.v)
		}
	}
	if c.EventsBackoffMax < c.EventsBackoff {
		return fmt.Errorf("config: OTP_EVENTS_BACKOFF_MAX=%s: must be at least OTP_EVENTS_BACKOFF (%s)", c.EventsBackoffMax, c.EventsBackoff)
	}
	return nil
}

// eventOptions are the dispatcher's options from the settings.
func (c *config) eventOptions() events.Options {
	return events.Options{
		RetryFor: c.EventsRetryFor, Backoff: c.EventsBackoff, MaxBackoff: c.EventsBackoffMax,
		Timeout: c.EventsTimeout, Poll: c.EventsPoll, Outbound: c.outbound,
	}
}
