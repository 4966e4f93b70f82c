package spend

import (
	"context"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
)

// Store keeps the spend configuration and writes the budget events. Implementations:
// internal/postgres (production) and internal/inmem (dev mode); spendtest holds
// the behaviour both share. Every change bumps the version reloaders poll and writes its
// audit entry in the same transaction.
type Store interface {
	// SpendConfig returns the stored configuration as JSON (nil when none was ever stored)
	// and the version.
	SpendConfig(ctx context.Context) ([]byte, int64, error)
	// SpendVersion returns the version alone, cheaply.
	SpendVersion(ctx context.Context) (int64, error)
	// UpdateSpendConfig calls update with the stored configuration (nil when none) under a
	// lock, stores what it returns, audits it and bumps the version, which it returns. An
	// error from update is returned as it is, and nothing changes.
	UpdateSpendConfig(ctx context.Context, update func(stored []byte) ([]byte, history.AdminAction, error)) (int64, error)
	// RecordBudgetThreshold writes a budget.threshold event for the endpoints subscribed to
	// it (those of d.AppID only when it is set); the same threshold of the same window is
	// written once however often it is recorded.
	RecordBudgetThreshold(ctx context.Context, key string, d events.BudgetThresholdData, at time.Time) error
	// SpendByDay sums the cost of the sends created in [from, to) that did not fail, per UTC
	// day, app and country, in that order.
	SpendByDay(ctx context.Context, from, to time.Time) ([]DayTotal, error)
	// TopPrefixes sums the same per number prefix (the E.164 number without its last drop
	// digits) since from, costliest first, at most limit.
	TopPrefixes(ctx context.Context, from time.Time, drop, limit int) ([]PrefixTotal, error)
	// SpentSince sums the same since from, of one app and one country when they are set.
	SpentSince(ctx context.Context, from time.Time, app, country string) (Micros, error)
}

// DayTotal is one line of SpendByDay.
type DayTotal struct {
	Day            time.Time
	AppID, Country string
	Cost           Micros
	Sends          int
}

// PrefixTotal is one line of TopPrefixes.
type PrefixTotal struct {
	Prefix, Country string
	Cost            Micros
	Sends           int
}

// ActionConfigChanged is the audit action of a change of the spend configuration.
const ActionConfigChanged = "spend_config_changed"

// Notifier tells every instance that the spend configuration changed, for a push faster
// than the reloaders' polling. internal/notify implements it over Redis pub/sub.
type Notifier interface {
	// Publish announces a change.
	Publish(ctx context.Context) error
	// Subscribe returns a channel that receives a value per announced change until ctx ends.
	Subscribe(ctx context.Context) (<-chan struct{}, error)
}
