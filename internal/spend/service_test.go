package spend_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
)

func newService(t *testing.T, c spend.Config) (*spend.Service, *inmem.Store) {
	t.Helper()
	store := inmem.New()
	r := spend.NewReloader(store, nil, c, slog.New(slog.DiscardHandler))
	if err := r.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return spend.NewService(r, store, slog.New(slog.DiscardHandler)), store
}

const app = "01900000-0000-7000-8000-000000000001"

func TestQuote(t *testing.T) {
	c := spend.Config{Currency: "USD",
		Prices: []spend.PriceText{{Channel: "sms", Country: "*", Price: "0.05"}, {Channel: "sms", Country: "JP", Price: "0.08"}},
		Budgets: []spend.Budget{
			{Name: "all", Daily: "100", Monthly: "2000", Mode: rate.BudgetEnforce},
			{Name: "mine", App: app, Daily: "10", Mode: rate.BudgetShadow, TimeZone: "Asia/Tokyo"},
			{Name: "jp", Country: "JP", Monthly: "50", Mode: rate.BudgetAlert},
			{Name: "mine-jp", App: app, Country: "JP", Daily: "1", Mode: rate.BudgetEnforce},
		}}
	s, _ := newService(t, c)
	// 16:00 UTC on 31 January is 1 February in Tokyo.
	now := time.Date(2030, 1, 31, 16, 0, 0, 0, time.UTC)

	q := s.Quote(otp.SpendQuery{AppID: app, Channel: "sms", Region: "JP", Address: "+819012345678", Segments: 2, Now: now})
	if q.Cost != 160_000 || q.Currency != "USD" {
		t.Fatalf("got %d %s, want 2 segments at 0.08", q.Cost, q.Currency)
	}
	want := map[string]time.Time{
		"all:day:20300131":     time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC),
		"all:month:20300101":   time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC),
		"mine:day:20300201":    time.Date(2030, 2, 1, 15, 0, 0, 0, time.UTC),
		"jp:month:20300101":    time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC),
		"mine-jp:day:20300131": time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC),
	}
	if len(q.Limits) != len(want) {
		t.Fatalf("got %d limits, want %d: %+v", len(q.Limits), len(want), q.Limits)
	}
	for _, l := range q.Limits {
		b := l.Budget
		if l.Scope != otp.ScopeBudget || b == nil || !b.Resets.Equal(want[l.Key]) || b.Cost != 160_000 || b.TTL <= b.Resets.Sub(now) {
			t.Errorf("limit %s: got %+v, want it to reset at %v", l.Key, b, want[l.Key])
		}
	}

	// Another app's email: only the global budget, at the email price (none here: free).
	if q := s.Quote(otp.SpendQuery{AppID: "other", Channel: "email", Address: "a@example.com", Now: now}); q.Cost != 0 || len(q.Limits) != 0 {
		t.Errorf("unpriced email: got %+v, want nothing reserved", q)
	}
	if q := s.Quote(otp.SpendQuery{AppID: "other", Channel: "sms", Region: "US", Address: "+12025550123", Segments: 1, Now: now}); q.Cost != 50_000 || len(q.Limits) != 2 {
		t.Errorf("another app's US send: got %+v, want 0.05 in the global budget's two windows", q)
	}
}

func TestDecidedSendsEachThresholdOnce(t *testing.T) {
	c := spend.Config{Currency: "EUR", Prices: []spend.PriceText{{Channel: "sms", Country: "*", Price: "0.05"}},
		Budgets: []spend.Budget{{Name: "mine", App: app, Daily: "1", Mode: rate.BudgetEnforce}}}
	s, store := newService(t, c)
	ctx := context.Background()
	if err := store.CreateEndpoint(ctx, events.Endpoint{ID: "01900000-0000-7000-8000-0000000000e1", AppID: app, URL: "http://receiver.test/",
		SecretSealed: []byte("sealed"), Types: []string{events.BudgetThreshold}, CreatedAt: time.Now()},
		history.AdminAction{Action: "webhook_added"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	q := otp.SpendQuery{AppID: app, Channel: "sms", Region: "JP", Address: "+819012345678", Segments: 1, Now: now}
	quote := s.Quote(q)
	st := rate.BudgetState{Scope: otp.ScopeBudget, Key: quote.Limits[0].Key, Mode: rate.BudgetEnforce, Cap: 1_000_000, Cost: 50_000, Spent: 500_000, Crossed: []int{50}}
	for range 2 { // a second report of the same crossing (a retry) writes nothing more
		s.Decided(ctx, q, quote.Limits, rate.Decision{Allowed: true, Budgets: []rate.BudgetState{st}})
	}
	claimed, err := store.ClaimEvents(ctx, now.Add(time.Minute), 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("got %d events, %v; want one", len(claimed), err)
	}
	ev := claimed[0].Event
	if ev.Type != events.BudgetThreshold || !contains(string(ev.Data), `"threshold":50`, `"budget":"mine"`, `"kind":"app"`,
		`"spent":"0.50"`, `"cap":"1.00"`, `"currency":"EUR"`, `"resets_at":"2030-01-03T00:00:00.000000Z"`, `"window_start":"2030-01-02T00:00:00.000000Z"`) {
		t.Errorf("got %s %s", ev.Type, ev.Data)
	}
}

// TestDecidedNamesACountryThatReachedItsShare: the first send of a window past a country's
// share of a fenced budget writes one budget.threshold event (threshold 100) naming the
// country and its share, once per country and window, apart from the cap's own thresholds.
func TestDecidedNamesACountryThatReachedItsShare(t *testing.T) {
	c := spend.Config{Currency: "USD", Prices: []spend.PriceText{{Channel: "sms", Country: "*", Price: "0.30"}},
		Budgets: []spend.Budget{{Name: "cap", Daily: "20", Mode: rate.BudgetEnforce}}}
	s, store := newService(t, c)
	ctx := context.Background()
	if err := store.CreateEndpoint(ctx, events.Endpoint{ID: "01900000-0000-7000-8000-0000000000e2", AppID: app, URL: "http://receiver.test/",
		SecretSealed: []byte("sealed"), Types: []string{events.BudgetThreshold}, CreatedAt: time.Now()},
		history.AdminAction{Action: "webhook_added"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	reached := func(cc string) {
		q := otp.SpendQuery{AppID: app, Channel: "sms", Region: cc, Address: "+998901234567", Segments: 1, Now: now}
		quote := s.Quote(q)
		if len(quote.Limits) != 1 || quote.Limits[0].Budget.Fence != rate.BudgetEnforce {
			t.Fatalf("got %+v, want the global budget fenced", quote.Limits)
		}
		st := rate.BudgetState{Scope: otp.ScopeBudget, Key: quote.Limits[0].Key, Mode: rate.BudgetEnforce, Cap: 20_000_000, Cost: 300_000, Spent: 900_000,
			Fence: rate.FenceState{Country: cc, Young: true, Share: 1_000_000, Spent: 900_000, Over: true, Refused: true, Reached: true}}
		s.Decided(ctx, q, quote.Limits, rate.Decision{Budgets: []rate.BudgetState{st}})
	}
	reached("UZ")
	reached("UZ") // a retry of the same report writes nothing more
	reached("KG")
	claimed, err := store.ClaimEvents(ctx, now.Add(time.Minute), 10, time.Minute)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("got %d events, %v; want one per country", len(claimed), err)
	}
	for i, cc := range []string{"UZ", "KG"} {
		ev := claimed[i].Event
		if ev.Type != events.BudgetThreshold || !contains(string(ev.Data), `"threshold":100`, `"budget":"cap"`, `"kind":"global"`, `"cap":"20.00"`,
			`"fence":{"country":"`+cc+`","young":true,"share":"1.00","spent":"0.90"}`) {
			t.Errorf("%s: got %s %s, want threshold 100 naming the country, its share and spend", cc, ev.Type, ev.Data)
		}
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestTheDefaultAppByItsAlias(t *testing.T) {
	c := spend.Config{Currency: "USD", Prices: []spend.PriceText{{Channel: "sms", Country: "*", Price: "0.05"}},
		Budgets: []spend.Budget{{Name: "default-app", App: "default", Daily: "1", Mode: rate.BudgetEnforce}}}
	if f := c.Validate(); len(f) != 0 {
		t.Fatalf("got %v, want the alias accepted", f)
	}
	s, _ := newService(t, c)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if q := s.Quote(otp.SpendQuery{AppID: otp.DefaultAppID, Channel: "sms", Region: "JP", Segments: 1, Now: now}); len(q.Limits) != 1 {
		t.Errorf("a send of the default app: got %d budget limits, want 1", len(q.Limits))
	}
	if q := s.Quote(otp.SpendQuery{AppID: app, Channel: "sms", Region: "JP", Segments: 1, Now: now}); len(q.Limits) != 0 {
		t.Errorf("a send of another app: got %d budget limits, want none", len(q.Limits))
	}
	bad := c
	bad.Budgets = []spend.Budget{{Name: "x", App: "not-an-app", Daily: "1", Mode: rate.BudgetEnforce}}
	if f := bad.Validate(); f["budgets[0].app"] == "" {
		t.Errorf("got %v, want budgets[0].app named", f)
	}
}
