package spend

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// AdminService is what the admin API under /admin/api/spend calls; *Admin implements it.
// Every change is validated, audited and applied by every instance.
type AdminService interface {
	// Config returns the stored configuration (the defaults when none is stored) and its version.
	Config(ctx context.Context) (Config, int64, error)
	// SetConfig replaces the configuration. Errors: *otp.ErrInvalidRequest naming each bad
	// field, and nothing changes.
	SetConfig(ctx context.Context, c Config, actor string) (Config, int64, error)
	// Running is the configuration this instance applies now.
	Running() *Snapshot
	// Summary gathers the Spend page as of now.
	Summary(ctx context.Context, now time.Time) (Summary, error)
}

// Admin implements AdminService over the store and the reloader.
type Admin struct {
	store     Store
	snapshots *Reloader
}

var _ AdminService = (*Admin)(nil)

// NewAdmin returns the admin service.
func NewAdmin(store Store, snapshots *Reloader) *Admin {
	return &Admin{store: store, snapshots: snapshots}
}

// Config implements AdminService.
func (a *Admin) Config(ctx context.Context) (Config, int64, error) {
	raw, v, err := a.store.SpendConfig(ctx)
	if err != nil {
		return Config{}, 0, err
	}
	return a.configOf(raw), v, nil
}

// configOf is the stored configuration, or the defaults when there is none (or it does not
// read, as the reloader then applies them).
func (a *Admin) configOf(raw []byte) Config {
	if raw == nil {
		return a.snapshots.Defaults()
	}
	c, err := DecodeConfig(raw)
	if err != nil {
		return a.snapshots.Defaults()
	}
	return c
}

// SetConfig implements AdminService. The audit entry names what changed: the currency, the
// number of prices and each budget added, removed or changed; its Before and After are the
// whole configuration.
func (a *Admin) SetConfig(ctx context.Context, c Config, actor string) (Config, int64, error) {
	if f := c.Validate(); len(f) > 0 {
		return Config{}, 0, &otp.ErrInvalidRequest{Detail: "the spend configuration has invalid fields", Fields: f}
	}
	if c.Budgets == nil {
		c.Budgets = []Budget{}
	}
	if c.Prices == nil {
		c.Prices = []PriceText{}
	}
	next, err := json.Marshal(c)
	if err != nil {
		return Config{}, 0, fmt.Errorf("spend: set config: %w", err)
	}
	version, err := a.store.UpdateSpendConfig(ctx, func(stored []byte) ([]byte, history.AdminAction, error) {
		was := a.configOf(stored)
		return next, history.AdminAction{Action: ActionConfigChanged, Target: "spend:config",
			Detail: changes(was, c) + "; by " + actor, Before: history.Change(was), After: string(next)}, nil
	})
	if err != nil {
		return Config{}, 0, err
	}
	if err := a.snapshots.Changed(ctx); err != nil {
		return Config{}, 0, err
	}
	return c, version, nil
}

// Running implements AdminService.
func (a *Admin) Running() *Snapshot { return a.snapshots.Snapshot() }

// changes says in one line what a change of configuration changed.
func changes(before, after Config) string {
	var out []string
	if before.Currency != after.Currency {
		out = append(out, "currency "+before.Currency+" → "+after.Currency)
	}
	if !slices.Equal(before.Prices, after.Prices) {
		out = append(out, fmt.Sprintf("prices (%d → %d lines)", len(before.Prices), len(after.Prices)))
	}
	old := map[string]Budget{}
	for _, b := range before.Budgets {
		old[b.Name] = b
	}
	for _, b := range after.Budgets {
		was, ok := old[b.Name]
		switch {
		case !ok:
			out = append(out, "budget "+b.Name+" added")
		case was != b:
			out = append(out, "budget "+b.Name+" changed")
		}
		delete(old, b.Name)
	}
	for _, b := range before.Budgets {
		if _, gone := old[b.Name]; gone {
			out = append(out, "budget "+b.Name+" removed")
		}
	}
	if len(out) == 0 {
		return "nothing changed"
	}
	return strings.Join(out, "; ")
}
