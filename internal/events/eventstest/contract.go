package eventstest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract of events.Store (endpoints, the outbox, claims and settlements,
// and the payloads the stores write); open is called once per case for a fresh, empty
// store. The events package's TestContract runs it over both stores.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Events", func(t *testing.T) {
		testEvents(t, open)
		testEventOrder(t, open)
		testEventEndings(t, open)
		testEventEndpoints(t, open)
	})
}
