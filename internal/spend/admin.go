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
	// EditConfig changes the stored configuration with edit, under the store's lock so that
	// edits made at once each see the other's. edit gets a copy it may change; its error
	// is returned as it is. What it returns is validated, audited and applied as SetConfig's.
	EditConfig(ctx context.Context, edit func(Config) (Config, error), actor string) (Config, int64, error)
	// Running is the configuration this instance applies now.
	Running() *Snapshot
	// Summary gathers the Spend page as of now.
	Summary(ctx context.Context, now time.Time) (Summary, error)
}

// Admin implements AdminService over the store and the reloader.
type Admin struct {
	store     Store
	snapshots *Reloader

	// Apps, when set, refuses a budget of an app it does not find; nil checks no app.
	Apps AppDirectory
}

var _ AdminService = (*Admin)(nil)

// NewAdmin returns the admin service.
func NewAdmin(store Store, snapshots *Reloader) *Admin {
	return &Admin{store: store, snapshots: snapshots}
}

// Config implements AdminService.
func (a *Admin) Config(ctx context.Context) (Config, int64, error) {
	raw, v, err := a.store.Setting(ctx, SettingName)
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

// SetConfig implements AdminService.
func (a *Admin) SetConfig(ctx context.Context, c Config, actor string) (Config, int64, error) {
	return a.EditConfig(ctx, func(Config) (Config, error) { return c, nil }, actor)
}

// EditConfig implements AdminService. What edit returns is held to ValidateChange against
// the stored configuration. The audit entry names what changed in its detail (the
// currency, the number of prices and each budget added, removed or changed) and holds the
// whole configuration before and after as JSON.
func (a *Admin) EditConfig(ctx context.Context, edit func(Config) (Config, error), actor string) (Config, int64, error) {
	var out Config
	version, err := a.store.UpdateSetting(ctx, SettingName, func(stored []byte) ([]byte, history.AdminAction, error) {
		before := a.configOf(stored)
		c, err := edit(before.clone())
		if err != nil {
			return nil, history.AdminAction{}, err
		}
		if f := c.ValidateChange(before, a.known(ctx)); len(f) > 0 {
			return nil, history.AdminAction{}, &otp.ErrInvalidRequest{Detail: "the spend configuration has invalid fields", Fields: f}
		}
		if c.Budgets == nil {
			c.Budgets = []Budget{}
		}
		if c.Prices == nil {
			c.Prices = []PriceText{}
		}
		was, err := json.Marshal(before)
		if err != nil {
			return nil, history.AdminAction{}, fmt.Errorf("spend: set config: %w", err)
		}
		next, err := json.Marshal(c)
		if err != nil {
			return nil, history.AdminAction{}, fmt.Errorf("spend: set config: %w", err)
		}
		out = c
		return next, history.AdminAction{Action: ActionConfigChanged, Target: "spend:config",
			Detail: changes(before, c) + "; by " + actor, Before: string(was), After: string(next)}, nil
	})
	if err != nil {
		return Config{}, 0, err
	}
	if err := a.snapshots.Changed(ctx); err != nil {
		return Config{}, 0, err
	}
	return out, version, nil
}

// known tells whether an app exists, for ValidateChange; nil when Apps is not set.
func (a *Admin) known(ctx context.Context) func(string) bool {
	if a.Apps == nil {
		return nil
	}
	return func(id string) bool {
		_, err := a.Apps.App(ctx, id)
		return err == nil
	}
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
