package spend

import (
	"context"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/settings"
)

// SettingName is the live setting (internal/settings) that holds the spend configuration
// as one JSON document: the currency, the price table and the budgets.
const SettingName = "spend"

// Store keeps the spend configuration (the live setting SettingName) and writes the budget
// events. Implementations: internal/postgres (production) and internal/inmem (dev mode);
// spendtest holds the behaviour both share.
type Store interface {
	settings.Store
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
