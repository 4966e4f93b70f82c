package storetest

import (
	"context"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/retention"
)

// Capability is something a store may do beyond what every store must. A store has it when
// its Store implements the capability's interface; the suite runs the capability's cases for
// every store that has it and skips them, naming it, for one that has not. So a store cannot
// claim a capability and skip its cases, and dev mode's store implements what dev mode
// runs, no more.
type Capability string

const (
	// Settling is Settler: marking sends as unknown whose outcome a stopped server never
	// wrote, which the production sweeper does. A store that forgets everything at exit
	// has no such sends.
	Settling Capability = "settling (storetest.Settler)"
	// Retention is retention.Store: hourly rollups, charts and conversion figures read across
	// them, and purges of old history and delivered events.
	Retention Capability = "retention (retention.Store)"
)

// Capabilities lists every capability the suite knows, in the order it runs their cases.
func Capabilities() []Capability { return []Capability{Settling, Retention} }

// Settler settles sends whose outcome was never written.
type Settler interface {
	// SettleSends marks at most limit sends still sending that were begun before before as
	// otp.SendUnknown at now, oldest first, and returns how many.
	SettleSends(ctx context.Context, before, now time.Time, limit int) (int, error)
}

// of reports whether store has c.
func (c Capability) of(store otp.Store) bool {
	switch c {
	case Settling:
		_, ok := store.(Settler)
		return ok
	case Retention:
		_, ok := store.(retention.Store)
		return ok
	}
	return false
}

// Missing lists the capabilities s lacks, whose cases the suite skips.
func Missing(s Stores) []Capability {
	var out []Capability
	for _, c := range Capabilities() {
		if !c.of(s.Store) {
			out = append(out, c)
		}
	}
	return out
}

// need skips the test unless the store has c.
func (e *env) need(c Capability) {
	e.t.Helper()
	if !c.of(e.Store) {
		e.t.Skipf("the store lacks %s", c)
	}
}

// settler is the store as a Settler; the test must need Settling.
func (e *env) settler() Settler { return e.Store.(Settler) }

// lifecycle is the store as a retention.Store; the test must need Retention.
func (e *env) lifecycle() retention.Store { return e.Store.(retention.Store) }
