package ratelimit

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/rate"
)

func TestBudgetFence(t *testing.T) { onBackends(t, testBudgetFence) }

func testBudgetFence(t *testing.T, newLimiter backend) {
	ctx := context.Background()
	// A send to country: its country's guard (which the fence reads the approvals of), a
	// fenced global daily budget of 1.00 whose young countries share 0.10, at 0.05 a send.
	send := func(country, fence string) (rate.Limit, rate.Limit) {
		g := testGuard(1000, false)
		g.Role = rate.RoleCountry
		guard := rate.Limit{Scope: rate.ScopeCountry, Key: country, Guard: g}
		b := budgetLimit(rate.BudgetEnforce, 1_000_000, 50_000)
		b.Budget.Fence, b.Budget.Country, b.Budget.Headroom = fence, country, 3
		b.Budget.YoungFloor, b.Budget.Window = 100_000, 24*time.Hour
		return guard, b
	}
	clocked := func(t *testing.T) (*Limiter, *clock) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		return l, c
	}

	t.Run("YoungCountriesShareTheFloorAndConvertingOnesEarnTheirShare", func(t *testing.T) {
		l, c := clocked(t)
		// Japan converts: ten sends, ten approvals, an hour ago.
		jp, jpb := send("JP", rate.BudgetEnforce)
		for range 10 {
			if d := mustAllow(t, l, jp); !d.Allowed {
				t.Fatalf("JP history: got %+v, want admitted", d.Guards[0])
			}
			if err := l.Approve(ctx, []rate.Limit{jp}, 1); err != nil {
				t.Fatal(err)
			}
		}
		c.Add(time.Hour)
		// Two young countries share 0.10: two sends at 0.05.
		for i, cc := range []string{"UZ", "KG", "UZ"} {
			g, b := send(cc, rate.BudgetEnforce)
			d := mustAllow(t, l, g, b)
			f := d.Budgets[0].Fence
			if f.Country != cc || !f.Young || f.Share != 100_000 {
				t.Fatalf("%s: got fence %+v, want %s held to the young countries' 0.10", cc, f, cc)
			}
			if i < 2 && (!d.Allowed || f.Spent != int64(i+1)*50_000) {
				t.Fatalf("young send %d: got allowed %v fence %+v, want admitted", i+1, d.Allowed, f)
			}
			if i == 2 {
				bs, ok := d.BudgetRefusal()
				if d.Allowed || !ok || !f.Over || !f.Refused || !f.Reached || f.Spent != 100_000 || bs.Spent != 100_000 {
					t.Fatalf("third young send: got allowed %v budget %+v, want refused by the fence at 0.10 spent", d.Allowed, d.Budgets[0])
				}
			}
		}
		// Japan's approvals earn it more than the cap: it spends the rest of it.
		admitted := 0
		for range 20 {
			d := mustAllow(t, l, jp, jpb)
			if !d.Allowed {
				if f := d.Budgets[0].Fence; f.Refused || !d.Budgets[0].Over {
					t.Fatalf("JP: got budget %+v, want refused by the cap only", d.Budgets[0])
				}
				break
			}
			if f := d.Budgets[0].Fence; f.Young || f.Share != 1_000_000 {
				t.Fatalf("JP: got fence %+v, want the whole cap as its share", f)
			}
			admitted++
		}
		if admitted != 18 {
			t.Errorf("JP: got %d sends admitted, want 18 (the cap less the young countries' 0.10)", admitted)
		}
	})

	t.Run("ALaunchThatConvertsGivesTheYoungFloorBack", func(t *testing.T) {
		l, c := clocked(t)
		ph, phb := send("PH", rate.BudgetEnforce)
		uz, uzb := send("UZ", rate.BudgetEnforce)
		for range 2 {
			if d := mustAllow(t, l, ph, phb); !d.Allowed || !d.Budgets[0].Fence.Young {
				t.Fatalf("PH's first sends: got allowed %v fence %+v, want admitted on the young countries' floor", d.Allowed, d.Budgets[0].Fence)
			}
		}
		if d := mustAllow(t, l, uz, uzb); d.Allowed {
			t.Fatalf("UZ: got admitted, want the young countries' floor spent")
		}
		// PH's users enter their codes: it earns a share of its own, and what it spent on
		// the floor leaves it.
		if err := l.Approve(ctx, []rate.Limit{ph}, 1); err != nil {
			t.Fatal(err)
		}
		c.Add(time.Minute)
		if d := mustAllow(t, l, ph, phb); !d.Allowed || d.Budgets[0].Fence.Young || d.Budgets[0].Fence.Spent != 150_000 {
			t.Fatalf("PH approved: got allowed %v fence %+v, want admitted on its own share, 0.15 spent", d.Allowed, d.Budgets[0].Fence)
		}
		if d := mustAllow(t, l, uz, uzb); !d.Allowed || d.Budgets[0].Fence.Spent != 50_000 {
			t.Fatalf("UZ after PH left the floor: got allowed %v fence %+v, want admitted, 0.05 on the floor", d.Allowed, d.Budgets[0].Fence)
		}
	})

	t.Run("ARefundGivesTheYoungFloorBack", func(t *testing.T) {
		l, _ := clocked(t)
		g, b := send("UZ", rate.BudgetEnforce)
		mustAllow(t, l, g, b)
		d := mustAllow(t, l, g, b)
		if !d.Allowed {
			t.Fatalf("second young send: got %+v, want admitted", d.Budgets[0])
		}
		if err := l.Refund(ctx, d.Reservation); err != nil {
			t.Fatal(err)
		}
		if d := mustAllow(t, l, g, b); !d.Allowed || d.Budgets[0].Fence.Spent != 100_000 {
			t.Fatalf("after a refund: got allowed %v fence %+v, want admitted at 0.10", d.Allowed, d.Budgets[0].Fence)
		}
		if d := mustAllow(t, l, g, b); d.Allowed {
			t.Fatalf("past the floor again: got admitted, want refused")
		}
	})

	t.Run("AShadowFenceReportsAndRefusesNothing", func(t *testing.T) {
		l, _ := clocked(t)
		g, b := send("UZ", rate.BudgetShadow)
		for i := range 4 {
			d := mustAllow(t, l, g, b)
			f := d.Budgets[0].Fence
			if !d.Allowed || f.Refused || f.Over != (i >= 2) || f.Reached != (i == 2) {
				t.Fatalf("send %d: got allowed %v fence %+v, want admitted, over past the floor, reached once", i+1, d.Allowed, f)
			}
		}
	})

	t.Run("WithoutTheCountrysGuardNothingIsFenced", func(t *testing.T) {
		l, _ := clocked(t)
		_, b := send("UZ", rate.BudgetEnforce)
		for i := range 4 {
			if d := mustAllow(t, l, b); !d.Allowed || d.Budgets[0].Fence != (rate.FenceState{}) {
				t.Fatalf("send %d: got allowed %v fence %+v, want admitted and not fenced", i+1, d.Allowed, d.Budgets[0].Fence)
			}
		}
	})
}
