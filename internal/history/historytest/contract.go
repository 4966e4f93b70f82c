// Package historytest is the contract of history.Store and history.EraseStore: the record
// of sends and checks as the console reads it (lists, pages, stats, attempts), the audit
// log, and erasure. The feature's TestContract runs it over both stores.
package historytest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("History", func(t *testing.T) { testHistory(t, open); testHistoryDetail(t, open) })
	t.Run("Pagination", func(t *testing.T) { testPagination(t, open) })
	t.Run("Stats", func(t *testing.T) { testStats(t, open) })
	t.Run("Admin", func(t *testing.T) { testAdmin(t, open) })
	t.Run("Attempts", func(t *testing.T) { testAttempts(t, open); testAttemptsRefusedAndPurged(t, open) })
	t.Run("Audit", func(t *testing.T) { testAudit(t, open) })
	t.Run("Erase", func(t *testing.T) { testErase(t, open) })
}
