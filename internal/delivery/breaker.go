package delivery

import (
	"sync"
	"time"
)

// BreakerState is a circuit breaker's state.
type BreakerState string

// Breaker states: closed lets every call through; open lets none through until its
// cool-down has passed; half-open lets one probe through, whose outcome closes or
// re-opens it.
const (
	BreakerClosed   BreakerState = "closed"
	BreakerOpen     BreakerState = "open"
	BreakerHalfOpen BreakerState = "half_open"
)

// BreakerConfig sets when a provider's breaker opens.
type BreakerConfig struct {
	// Failures is how many consecutive failures open the breaker; 0 never opens it.
	Failures int
	// Cooldown is how long it stays open before one probe may go through.
	Cooldown time.Duration
}

// ticket says how a call got through a breaker, for reporting its outcome.
type ticket int

const (
	ticketNone   ticket = iota // refused
	ticketNormal               // closed
	ticketProbe                // the one half-open probe
	ticketForced               // let through although open: no other provider was available
)

// breaker counts one provider's consecutive failures. Each server process has its own.
type breaker struct {
	cfg BreakerConfig
	now func() time.Time

	mu          sync.Mutex
	state       BreakerState
	consecutive int
	openedAt    time.Time
	probing     bool
}

func newBreaker(cfg BreakerConfig, now func() time.Time) *breaker {
	return &breaker{cfg: cfg, now: now, state: BreakerClosed}
}

// available reports whether acquire would let a call through without forcing.
func (b *breaker) available() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == BreakerClosed || b.probeDue()
}

func (b *breaker) probeDue() bool {
	return b.state != BreakerClosed && !b.probing && b.now().Sub(b.openedAt) >= b.cfg.Cooldown
}

// acquire lets a call through or refuses it; force lets it through regardless.
func (b *breaker) acquire(force bool) ticket {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.state == BreakerClosed:
		return ticketNormal
	case b.probeDue():
		b.state, b.probing = BreakerHalfOpen, true
		return ticketProbe
	case force:
		return ticketForced
	}
	return ticketNone
}

// done reports a call's outcome and returns the state after it and whether it changed.
func (b *breaker) done(t ticket, ok bool) (BreakerState, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	before := b.state
	switch t {
	case ticketNormal:
		// A call let through while closed may end after the breaker opened; then it
		// tells nothing new.
		if b.state != BreakerClosed {
			break
		}
		if ok {
			b.consecutive = 0
			break
		}
		b.consecutive++
		if b.cfg.Failures > 0 && b.consecutive >= b.cfg.Failures {
			b.state, b.openedAt = BreakerOpen, b.now()
		}
	case ticketProbe, ticketForced:
		if t == ticketProbe {
			b.probing = false
		}
		if ok {
			b.state, b.consecutive = BreakerClosed, 0
		} else if t == ticketProbe || b.state == BreakerOpen {
			b.state, b.openedAt = BreakerOpen, b.now()
		}
	}
	return b.state, b.state != before
}

// State is the breaker's state now; an open breaker whose cool-down has passed reads
// as half-open, since the next call will probe.
func (b *breaker) State() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerOpen && b.probeDue() {
		return BreakerHalfOpen
	}
	return b.state
}
