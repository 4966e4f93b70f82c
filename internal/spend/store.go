package spend

import (
	"context"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
)

// Store keeps the spend configuration and writes the budget events. Implementations:
// internal/postgres (production) and internal/inmem (dev mode); internal/storetest holds
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
