package fraud_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/settings"
	"otpgate/internal/testenv/fixture"
)

// fakeCounter records what the guard asked of the limiter.
type fakeCounter struct {
	mu       sync.Mutex
	approved [][]rate.Limit
	lifted   []string
}

func (c *fakeCounter) Approve(_ context.Context, targets []rate.Limit, _ float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.approved = append(c.approved, targets)
	return nil
}

func (c *fakeCounter) Lift(_ context.Context, scope, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lifted = append(c.lifted, scope+" "+key)
	return nil
}

// bus is a Notifier between reloaders of one test.
type bus struct {
	mu   sync.Mutex
	subs []chan struct{}
}

func (b *bus) Publish(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		select {
		case s <- struct{}{}:
		default:
		}
	}
	return nil
}

func (b *bus) Subscribe(context.Context) (<-chan struct{}, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := make(chan struct{}, 1)
	b.subs = append(b.subs, c)
	return c, nil
}

// instance is one server's fraud parts over a shared store.
type instance struct {
	reloader *fraud.Reloader
	admin    *fraud.Admin
	guard    *fraud.Guard
	counter  *fakeCounter
}

func newInstance(t *testing.T, store fraud.Store, n settings.Notifier, defaults fraud.Config) *instance {
	t.Helper()
	r := fraud.NewReloader(store, n, defaults, slog.New(slog.DiscardHandler))
	r.Poll = 20 * time.Millisecond
	if err := r.Load(t.Context()); err != nil {
		t.Fatalf("Load: %v", err)
	}
	c := &fakeCounter{}
	return &instance{reloader: r, admin: fraud.NewAdmin(store, r, c), guard: fraud.NewGuard(r, c, store, slog.New(slog.DiscardHandler)), counter: c}
}

func TestReloadAndAdmin(t *testing.T) {
	ctx := context.Background()

	t.Run("AFreshStoreStartsFromTheDefaults", func(t *testing.T) {
		store := inmem.New()
		shadow, _ := fraud.Defaults().Apply(map[string]string{"fraud_guard": "shadow"})
		in := newInstance(t, store, nil, shadow)
		if got := in.reloader.Snapshot().Config.Mode; got != fraud.ModeShadow {
			t.Errorf("got mode %s, want the defaults' shadow", got)
		}
		// A second instance with other defaults reads what the first stored.
		other := newInstance(t, store, nil, fraud.Defaults())
		if got := other.reloader.Snapshot().Config.Mode; got != fraud.ModeShadow {
			t.Errorf("second instance: got mode %s, want the stored shadow", got)
		}
	})

	t.Run("AChangeReachesEveryInstance", func(t *testing.T) {
		store, b := inmem.New(), &bus{}
		a, polled, pushed := newInstance(t, store, b, fraud.Defaults()), newInstance(t, store, nil, fraud.Defaults()), newInstance(t, store, b, fraud.Defaults())
		pushed.reloader.Poll = time.Hour // only the push can bring the change in time
		for _, in := range []*instance{polled, pushed} {
			go func() { _ = in.reloader.Run(t.Context()) }()
		}
		time.Sleep(50 * time.Millisecond) // let the subscriptions start
		c, v, err := a.admin.UpdateSettings(ctx, map[string]string{"fraud_guard": "off", "limit_prefix": "5/1h"}, "tester")
		if err != nil || c.Mode != fraud.ModeOff || v != 1 {
			t.Fatalf("UpdateSettings: got %+v %d %v", c, v, err)
		}
		if got := a.reloader.Snapshot().Config.Mode; got != fraud.ModeOff {
			t.Errorf("the changing instance: got %s, want off at once", got)
		}
		for name, in := range map[string]*instance{"polled": polled, "pushed": pushed} {
			fixture.Eventually(t, name, 2*time.Second, func() bool { return in.reloader.Snapshot().Config.Mode == fraud.ModeOff })
		}
		actions, _ := store.AdminActions(ctx, 1)
		if len(actions) != 1 || actions[0].Action != fraud.ActionConfigChanged ||
			actions[0].Detail != "fraud_guard enforce → off; limit_prefix off → 5/1h; by tester" {
			t.Errorf("audit: got %+v", actions)
		}
	})

	t.Run("ABadValueChangesNothing", func(t *testing.T) {
		store := inmem.New()
		in := newInstance(t, store, nil, fraud.Defaults())
		_, _, err := in.admin.UpdateSettings(ctx, map[string]string{"fraud_guard": "off", "fraud_ratio": "7"}, "tester")
		var inv *otp.ErrInvalidRequest
		if !errors.As(err, &inv) || inv.Fields["fraud_ratio"] == "" {
			t.Fatalf("got %v, want a refusal naming fraud_ratio", err)
		}
		if v, _ := store.SettingVersion(ctx, fraud.SettingName); v != 0 {
			t.Errorf("got version %d, want 0", v)
		}
		if c, _, _ := in.admin.Settings(ctx); c.Mode != fraud.ModeEnforce {
			t.Errorf("got mode %s, want enforce unchanged", c.Mode)
		}
		if actions, _ := store.AdminActions(ctx, 0); len(actions) != 0 {
			t.Errorf("audit: got %+v, want nothing", actions)
		}
	})

	t.Run("ListsApplyAtOnce", func(t *testing.T) {
		in := newInstance(t, inmem.New(), nil, fraud.Defaults())
		e, _ := fraud.NewListEntry("block", "", "NG", "")
		added, err := in.admin.AddListEntry(ctx, e, "tester")
		if err != nil {
			t.Fatalf("AddListEntry: %v", err)
		}
		ng := otp.FraudTarget{Phone: "+2348031234567", Region: "NG", ClientIP: "192.0.2.1"}
		if got := in.guard.Screen(ng); got.Blocked != "country NG" {
			t.Errorf("got %+v, want blocked", got)
		}
		if _, err := in.admin.RemoveListEntry(ctx, added.ID, "tester"); err != nil {
			t.Fatalf("RemoveListEntry: %v", err)
		}
		if got := in.guard.Screen(ng); got.Blocked != "" {
			t.Errorf("after removal: got %+v, want not blocked", got)
		}
		if _, err := in.admin.RemoveListEntry(ctx, added.ID, "tester"); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("second removal: got %v, want ErrNotFound", err)
		}
	})

	t.Run("BlocksAreRecordedListedAndLifted", func(t *testing.T) {
		store := inmem.New()
		in := newInstance(t, store, nil, fraud.Defaults())
		at := time.Now().UTC()
		gs := rate.GuardState{Scope: rate.ScopePrefix, Key: "+81901234", Blocked: true, Tripped: true, RetryAfter: 12 * time.Hour, Unapproved: 9}
		target := otp.FraudTarget{Phone: "+819012345678", Region: "JP", ClientIP: "192.0.2.1"}
		if err := in.guard.BlockStarted(ctx, target, gs, rate.FraudExplanation{Signal: rate.SignalRecent, Scope: gs.Scope, Key: gs.Key, Action: rate.FraudTripped}, at); err != nil {
			t.Fatalf("BlockStarted: %v", err)
		}
		blocks, err := in.admin.Blocks(ctx, false)
		if err != nil || len(blocks) != 1 || blocks[0].Mode != fraud.ModeEnforce || blocks[0].Target != "+81901234" ||
			!blocks[0].EndsAt.Equal(at.Add(12*time.Hour).Truncate(time.Microsecond)) {
			t.Fatalf("Blocks: got %+v, %v", blocks, err)
		}
		if _, err := in.admin.LiftBlock(ctx, blocks[0].ID, "tester"); err != nil {
			t.Fatalf("LiftBlock: %v", err)
		}
		if got := in.counter.lifted; len(got) != 1 || got[0] != "prefix +81901234" {
			t.Errorf("limiter lifts: got %v", got)
		}
		if active, _ := in.admin.Blocks(ctx, false); len(active) != 0 {
			t.Errorf("after the lift: got %+v, want none active", active)
		}
		actions, _ := store.AdminActions(ctx, 0)
		if len(actions) != 2 || actions[0].Action != fraud.ActionBlockLifted || actions[1].Action != fraud.ActionBlockStarted {
			t.Errorf("audit: got %+v, want the start and the lift", actions)
		}
	})

	t.Run("ApprovalsGoToTheSendsGuards", func(t *testing.T) {
		in := newInstance(t, inmem.New(), nil, fraud.Defaults())
		if err := in.guard.Approved(ctx, otp.FraudTarget{Phone: "+819012345678", Region: "JP", ClientIP: "192.0.2.1"}, otp.Approval{SentAt: time.Unix(0, 0), At: time.Unix(60, 0), ClientIP: "192.0.2.1"}); err != nil {
			t.Fatal(err)
		}
		got := in.counter.approved
		if len(got) != 1 || len(got[0]) != 4 || got[0][1].Key != "+81901234" || got[0][2].Key != "192.0.2.0/24" ||
			got[0][3].Scope != rate.ScopeYoungCountries || got[0][3].Guard.Role != rate.RolePool {
			t.Errorf("got %+v, want the country, prefix, network and the young countries' pool", got)
		}
	})

	t.Run("ConversionPerCountry", func(t *testing.T) {
		store := inmem.New()
		in := newInstance(t, store, nil, fraud.Defaults())
		send := func(phone string) {
			_, err := store.BeginSend(ctx, otp.BeginSend{Phone: phone, Channel: "sms", Locale: "en", Now: time.Now().UTC(), TTL: time.Minute,
				MaxSends: 5, MaxAttempts: 5, NewVerificationID: newID(), SendID: newID(), CodeHash: func(string) []byte { return []byte{1} }})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []string{"+819012345678", "+819087654321", "+447700900123"} {
			send(p)
		}
		got, err := in.admin.Conversion(ctx, fraud.ByCountry, time.Now().Add(-time.Hour))
		if err != nil || len(got) != 2 || got[0].Key != "JP" || got[0].Sends != 2 || got[1].Key != "GB" {
			t.Errorf("got %+v, %v; want JP with 2 sends, then GB", got, err)
		}
	})
}

var ids struct {
	sync.Mutex
	n int
}

// newID makes distinct uuids.
func newID() string {
	ids.Lock()
	defer ids.Unlock()
	ids.n++
	return "0190a000-0000-7000-8000-" + pad(ids.n)
}

func pad(n int) string {
	s := "000000000000" + strconv.Itoa(n)
	return s[len(s)-12:]
}
