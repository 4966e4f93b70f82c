// Package storetest is the verification kernel's store contract: sends, checks, receipts,
// delivery, addresses and text. Its own test runs it over both stores (internal/storetest/
// stores), as each feature's test runs the contract the feature owns, so that dev mode and
// production cannot drift apart in what both do. What only some stores do
// (fixture.Capabilities) runs for those that do it.
package storetest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Subject is one store under test with its hooks; see fixture.Subject.
type Subject = fixture.Subject

// Run runs the kernel's contract; open is called once per case for a fresh, empty store. The
// cases of a capability the store lacks are skipped, each naming it.
func Run(t *testing.T, open func(t *testing.T) Subject) {
	t.Run("Send", func(t *testing.T) { testSend(t, open) })
	t.Run("Resend", func(t *testing.T) { testResend(t, open) })
	t.Run("FinishSend", func(t *testing.T) { testFinish(t, open) })
	t.Run("Settle", func(t *testing.T) { testSettle(t, open) })
	t.Run("Check", func(t *testing.T) { testCheck(t, open); testCheckClosing(t, open) })
	t.Run("Newest", func(t *testing.T) { testNewest(t, open) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, open) })
	t.Run("Receipts", func(t *testing.T) { testReceipts(t, open); testReceiptPrices(t, open) })
	t.Run("Delivery", func(t *testing.T) { testDelivery(t, open) })
	t.Run("AppScope", func(t *testing.T) { testAppScope(t, open) })
	t.Run("PSD2", func(t *testing.T) { testPSD2(t, open) })
	t.Run("Text", func(t *testing.T) { testText(t, open) })
	t.Run("Addresses", func(t *testing.T) { testAddresses(t, open) })
}
