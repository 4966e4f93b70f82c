package fraud

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// AdminService is what the console's Fraud page and the admin API under /admin/api/fraud
// call; *Admin implements it. Every change is audited and applied by every instance.
type AdminService interface {
	// Settings returns the stored configuration and its version.
	Settings(ctx context.Context) (Config, int64, error)
	// UpdateSettings sets the given settings (by name, as text) on the stored ones. Errors:
	// *otp.ErrInvalidRequest naming each bad setting, and nothing changes.
	UpdateSettings(ctx context.Context, values map[string]string, actor string) (Config, int64, error)
	// Lists returns every entry of both lists, oldest first.
	Lists(ctx context.Context) ([]ListEntry, error)
	// AddListEntry adds an entry made by NewListEntry. Errors: *otp.ErrInvalidRequest
	// naming "value" when the list has it already.
	AddListEntry(ctx context.Context, e ListEntry, actor string) (ListEntry, error)
	// RemoveListEntry removes an entry and returns it. Errors: otp.ErrNotFound.
	RemoveListEntry(ctx context.Context, id int64, actor string) (ListEntry, error)
	// Blocks returns the active blocks, or all, newest first.
	Blocks(ctx context.Context, all bool) ([]Block, error)
	// LiftBlock ends a block now: its row, its key in the limiter. Errors: otp.ErrNotFound.
	LiftBlock(ctx context.Context, id, actor string) (Block, error)
	// Conversion counts sends, blocked sends and approvals since since per country or per
	// prefix, busiest first.
	Conversion(ctx context.Context, by ConversionBy, since time.Time) ([]Conversion, error)
	// ShadowSends returns the newest sends that shadow rules or the shadow guard flagged.
	ShadowSends(ctx context.Context, limit int) ([]history.SendRow, error)
	// ChallengedSends returns the newest sends refused for want of a challenge or admitted
	// on a solved one, with their explanations.
	ChallengedSends(ctx context.Context, limit int) ([]history.SendRow, error)
	// Actions returns the newest audit entries of the fraud guard, at most limit.
	Actions(ctx context.Context, limit int) ([]history.AdminAction, error)
	// Running is the configuration this instance applies now.
	Running() *Snapshot
}

// ConversionBy is what Conversion groups by.
type ConversionBy string

// Groupings of Conversion.
const (
	ByCountry ConversionBy = "country"
	ByPrefix  ConversionBy = "prefix"
)

// Conversion is one country's or prefix's sends and approvals.
type Conversion struct {
	Key                       string
	Sends, Blocked, Approvals int
	// Ratio is Approvals / Sends; 0 without sends.
	Ratio float64
}

// Admin implements AdminService over the store, the reloader and the limiter.
type Admin struct {
	store     Store
	snapshots *Reloader
	counter   Counter

	// Now is the clock of lifts; tests replace it.
	Now func() time.Time
}

var _ AdminService = (*Admin)(nil)

// NewAdmin returns the admin service.
func NewAdmin(store Store, snapshots *Reloader, counter Counter) *Admin {
	return &Admin{store: store, snapshots: snapshots, counter: counter, Now: func() time.Time { return time.Now().UTC() }}
}

// Settings implements AdminService.
func (a *Admin) Settings(ctx context.Context) (Config, int64, error) {
	st, err := a.store.FraudState(ctx)
	if err != nil {
		return Config{}, 0, err
	}
	return a.snapshots.configOf(st.Values), st.Version, nil
}

// UpdateSettings implements AdminService. Settings that keep their value change nothing;
// the audit entry lists the ones that changed.
func (a *Admin) UpdateSettings(ctx context.Context, values map[string]string, actor string) (Config, int64, error) {
	if len(values) == 0 {
		return Config{}, 0, &otp.ErrInvalidRequest{Detail: "no settings given", Fields: map[string]string{"settings": "give at least one setting"}}
	}
	var next Config
	version, err := UpdateConfig(ctx, a.store, func(stored map[string]string) (map[string]string, history.AdminAction, error) {
		current := a.snapshots.configOf(stored)
		var err error
		if next, err = current.Apply(values); err != nil {
			return nil, history.AdminAction{}, err
		}
		before, after := current.Values(), next.Values()
		var changes []string
		was, is := map[string]string{}, map[string]string{}
		for _, name := range FieldNames() {
			if before[name] != after[name] {
				changes = append(changes, fmt.Sprintf("%s %s → %s", name, before[name], after[name]))
				was[name], is[name] = before[name], after[name]
			}
		}
		if len(changes) == 0 {
			changes = []string{"no setting changed"}
		}
		wasJSON, _ := json.Marshal(was) // maps of strings always marshal
		isJSON, _ := json.Marshal(is)
		return after, history.AdminAction{Action: ActionConfigChanged, Target: "fraud:config",
			Detail: strings.Join(changes, "; ") + "; by " + actor, Before: string(wasJSON), After: string(isJSON)}, nil
	})
	if err != nil {
		return Config{}, 0, err
	}
	if err := a.snapshots.Changed(ctx); err != nil {
		return Config{}, 0, err
	}
	return next, version, nil
}

// Lists implements AdminService.
func (a *Admin) Lists(ctx context.Context) ([]ListEntry, error) {
	st, err := a.store.FraudState(ctx)
	return st.Entries, err
}

// AddListEntry implements AdminService.
func (a *Admin) AddListEntry(ctx context.Context, e ListEntry, actor string) (ListEntry, error) {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = a.Now()
	}
	// The store completes the entry's target and After once e has its id (AuditListAdd).
	out, err := a.store.AddFraudListEntry(ctx, e, history.AdminAction{
		Action: ActionListAdded, Target: e.AuditTarget(), Detail: noted(e.Note) + "by " + actor,
	})
	if err != nil {
		return ListEntry{}, err
	}
	return out, a.snapshots.Changed(ctx)
}

// RemoveListEntry implements AdminService.
func (a *Admin) RemoveListEntry(ctx context.Context, id int64, actor string) (ListEntry, error) {
	out, err := a.store.DeleteFraudListEntry(ctx, id, history.AdminAction{Action: ActionListRemoved, Detail: "by " + actor})
	if err != nil {
		return ListEntry{}, err
	}
	return out, a.snapshots.Changed(ctx)
}

func noted(note string) string {
	if note == "" {
		return ""
	}
	return "note " + fmt.Sprintf("%q", note) + "; "
}

// Blocks implements AdminService.
func (a *Admin) Blocks(ctx context.Context, all bool) ([]Block, error) {
	return a.store.FraudBlocks(ctx, BlockFilter{All: all, Now: a.Now(), Limit: history.MaxListLimit})
}

// LiftBlock implements AdminService. The row is marked and audited first; the limiter's key
// goes next, so a failure there leaves a lifted row that a second lift finishes.
func (a *Admin) LiftBlock(ctx context.Context, id, actor string) (Block, error) {
	b, err := a.store.LiftFraudBlock(ctx, id, a.Now(), actor, history.AdminAction{Action: ActionBlockLifted, Detail: "by " + actor})
	if err != nil {
		return Block{}, err
	}
	if err := a.counter.Lift(ctx, b.Scope, b.Target); err != nil {
		return Block{}, fmt.Errorf("fraud: lift %s %s: %w", b.Scope, b.Target, err)
	}
	a.snapshots.countBlocks(ctx)
	return b, nil
}

// Conversion implements AdminService. Prefixes are grouped by the running prefix length;
// a prefix's country is the one its numbers belong to.
func (a *Admin) Conversion(ctx context.Context, by ConversionBy, since time.Time) ([]Conversion, error) {
	drop := a.snapshots.Snapshot().Config.PrefixDrop
	rows, err := a.store.FraudConversion(ctx, since, drop)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*Conversion{}
	for _, r := range rows {
		key := r.Prefix
		if by == ByCountry {
			key = regionOf(r.Prefix, drop)
		}
		c := byKey[key]
		if c == nil {
			c = &Conversion{Key: key}
			byKey[key] = c
		}
		c.Sends += r.Sends
		c.Blocked += r.Blocked
		c.Approvals += r.Approvals
	}
	out := make([]Conversion, 0, len(byKey))
	for _, c := range byKey {
		if c.Sends > 0 {
			c.Ratio = float64(c.Approvals) / float64(c.Sends)
		}
		out = append(out, *c)
	}
	slices.SortFunc(out, func(x, y Conversion) int {
		return cmp.Or(cmp.Compare(y.Sends+y.Blocked, x.Sends+x.Blocked), strings.Compare(x.Key, y.Key))
	})
	return out, nil
}

// regionOf is the country of the numbers under a prefix: the region its numbers belong to,
// else the main region of its country calling code, else "unknown".
func regionOf(prefix string, drop int) string {
	n, err := phonenumbers.Parse(prefix+strings.Repeat("0", drop), "")
	if err != nil {
		return "unknown"
	}
	for _, r := range []string{phonenumbers.GetRegionCodeForNumber(n), phonenumbers.GetRegionCodeForCountryCode(int(n.GetCountryCode()))} {
		if r != "" && r != "ZZ" {
			return r
		}
	}
	return "unknown"
}

// ShadowSends implements AdminService.
func (a *Admin) ShadowSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	return a.store.ShadowSends(ctx, limit)
}

// ChallengedSends implements AdminService.
func (a *Admin) ChallengedSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	return a.store.ChallengedSends(ctx, limit)
}

// Running implements AdminService.
func (a *Admin) Running() *Snapshot { return a.snapshots.Snapshot() }

// Actions implements AdminService, from the newest audit entries of every kind.
func (a *Admin) Actions(ctx context.Context, limit int) ([]history.AdminAction, error) {
	all, err := a.store.AdminActions(ctx, history.MaxListLimit)
	if err != nil {
		return nil, err
	}
	var out []history.AdminAction
	for _, act := range all {
		if strings.HasPrefix(act.Action, "fraud_") && len(out) < limit {
			out = append(out, act)
		}
	}
	return out, nil
}
