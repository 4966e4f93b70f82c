// Package storetest runs every store contract over one store: the verification kernel's
// own (sends, checks, receipts, delivery, addresses, text) and, by name, the contract each
// feature owns in its own <feature>test package. internal/postgres and internal/inmem both
// run it, so that dev mode and production cannot drift apart in what both do. What only
// some stores do (fixture.Capabilities) runs for those that do it.
package storetest

import (
	"testing"

	"otpgate/internal/apps/appstest"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/fraud/fraudtest"
	"otpgate/internal/history/historytest"
	"otpgate/internal/operators/operatorstest"
	"otpgate/internal/retention/retentiontest"
	"otpgate/internal/settings/settingstest"
	"otpgate/internal/spend/spendtest"
	"otpgate/internal/storetest/fixture"
	"otpgate/internal/tokens"
	"otpgate/internal/tokens/tokenstest"
	"otpgate/internal/totp/totptest"
	"otpgate/internal/tracing/tracingtest"
)

// Subject is one store under test with its hooks; see fixture.Subject.
type Subject = fixture.Subject

// Run runs every contract; open is called once per case for a fresh, empty store. The
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
	for _, run := range features {
		run(t, open)
	}
}

// features are the contracts the features own; each names its own cases.
var features = []func(t *testing.T, open func(t *testing.T) Subject){
	historytest.Run,
	appstest.Run,
	fraudtest.Run,
	spendtest.Run,
	settingstest.Run,
	eventstest.Run,
	retentiontest.Run,
	totptest.Run,
	operatorstest.Run,
	tracingtest.Run,
	func(t *testing.T, open func(t *testing.T) Subject) {
		t.Run("Tokens", func(t *testing.T) {
			tokenstest.Run(t, func(t *testing.T) tokens.Store { return open(t).Store })
		})
	},
}
