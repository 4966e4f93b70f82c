// Package tracingtest is the contract of tracing.TraceStore: the trace context of traced
// sends, found again by their checks and receipts. The tracing package's TestContract runs
// it over both stores.
package tracingtest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Traces", func(t *testing.T) { testTraces(t, open) })
}
