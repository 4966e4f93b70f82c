package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"otpgate/internal/rate"
)

// budgetLimit is a daily budget window of capacity micro-units, this request costing cost.
func budgetLimit(mode string, capacity, cost int64) rate.Limit {
	return rate.Limit{Scope: "budget", Key: "app:demo:day:20300102", Budget: &rate.Budget{Mode: mode, Cap: capacity, Cost: cost, TTL: 25 * time.Hour}}
}

// phoneLimit is a phone rule of five sends an hour on the n-th number.
func phoneLimit(n int) rate.Limit {
	return rate.Limit{Scope: "phone", Key: fmt.Sprintf("+8190%08d", n), Rules: []rate.Rule{{Limit: 5, Window: time.Hour}}}
}

func TestBudget(t *testing.T) { onBackends(t, testBudget) }

func testBudget(t *testing.T, newLimiter backend) {
	ctx := context.Background()

	t.Run("AdmitsUpToTheCapExactly", func(t *testing.T) {
		l, rdb := newLimiter(t)
		b := budgetLimit(rate.BudgetEnforce, 1_000_000, 50_000)
		var crossed []int
		for i := range 20 {
			d := mustAllow(t, l, phoneLimit(i), b)
			if !d.Allowed {
				t.Fatalf("send %d: got refused %+v, want admitted: 20 fit", i+1, d.Budgets[0])
			}
			crossed = append(crossed, d.Budgets[0].Crossed...)
		}
		d := mustAllow(t, l, phoneLimit(21), b)
		bs, ok := d.BudgetRefusal()
		if d.Allowed || !ok || bs.Spent != 1_000_000 || len(d.Violations()) != 0 {
			t.Fatalf("21st send: got allowed %v budget %+v, want refused with 1,000,000 spent and no rule violated", d.Allowed, d.Budgets[0])
		}
		if got, want := fmt.Sprint(crossed), "[50 80 100]"; got != want {
			t.Errorf("thresholds crossed: got %s, want %s, each once", got, want)
		}
		if got := count(t, l, rdb, phoneLimit(21)); got != 0 {
			t.Errorf("the refused send was recorded: %d entries", got)
		}
	})

	t.Run("ARefundGivesTheCostBackOnce", func(t *testing.T) {
		l, _ := newLimiter(t)
		b := budgetLimit(rate.BudgetEnforce, 100_000, 50_000)
		mustAllow(t, l, phoneLimit(1), b)
		d := mustAllow(t, l, phoneLimit(2), b)
		if !d.Allowed {
			t.Fatal("second send refused, want admitted")
		}
		for range 2 {
			if err := l.Refund(ctx, d.Reservation); err != nil {
				t.Fatal(err)
			}
		}
		if d := mustAllow(t, l, phoneLimit(3), b); !d.Allowed || d.Budgets[0].Spent != 100_000 {
			t.Fatalf("after a refund: got allowed %v budget %+v, want admitted at 100,000", d.Allowed, d.Budgets[0])
		}
		if d := mustAllow(t, l, phoneLimit(4), b); d.Allowed {
			t.Fatalf("a second refund gave the cost back twice: got admitted at %+v", d.Budgets[0])
		}
	})

	t.Run("ARefusedRequestReservesNothing", func(t *testing.T) {
		l, _ := newLimiter(t)
		b := budgetLimit(rate.BudgetEnforce, 100_000, 50_000)
		busy := rate.Limit{Scope: "phone", Key: "+819000000000", Rules: []rate.Rule{{Limit: 1, Window: time.Hour}}}
		mustAllow(t, l, busy, b)
		if d := mustAllow(t, l, busy, b); d.Allowed || d.Budgets[0].Spent != 50_000 || d.Budgets[0].Over {
			t.Fatalf("got allowed %v budget %+v, want refused by the phone rule with 50,000 spent", d.Allowed, d.Budgets[0])
		}
		if d := mustAllow(t, l, phoneLimit(1), b); !d.Allowed {
			t.Fatalf("got refused %+v, want the cap's second send admitted", d.Budgets[0])
		}
	})

	t.Run("ShadowAndAlertRefuseNothing", func(t *testing.T) {
		for _, mode := range []string{rate.BudgetShadow, rate.BudgetAlert} {
			l, _ := newLimiter(t)
			b := budgetLimit(mode, 100_000, 60_000)
			mustAllow(t, l, phoneLimit(1), b)
			d := mustAllow(t, l, phoneLimit(2), b)
			if bs := d.Budgets[0]; !d.Allowed || !bs.Over || bs.Refuses() || bs.Spent != 120_000 {
				t.Errorf("%s: got allowed %v budget %+v, want admitted, over, 120,000 spent", mode, d.Allowed, bs)
			}
		}
	})

	t.Run("ExhaustionCrossesTheFullThresholdOnce", func(t *testing.T) {
		l, _ := newLimiter(t)
		b := budgetLimit(rate.BudgetEnforce, 120_000, 50_000)
		mustAllow(t, l, phoneLimit(1), b)
		mustAllow(t, l, phoneLimit(2), b)
		d := mustAllow(t, l, phoneLimit(3), b)
		if got := fmt.Sprint(d.Budgets[0].Crossed); d.Allowed || got != "[100]" {
			t.Fatalf("first refusal: got allowed %v crossed %s, want refused crossing 100", d.Allowed, got)
		}
		if d := mustAllow(t, l, phoneLimit(4), b); len(d.Budgets[0].Crossed) != 0 {
			t.Errorf("second refusal: got crossed %v, want nothing", d.Budgets[0].Crossed)
		}
	})

	t.Run("ConcurrentSendsNeverPassTheCap", func(t *testing.T) {
		l, _ := newLimiter(t)
		b := budgetLimit(rate.BudgetEnforce, 1_000_000, 50_000)
		var admitted, full atomic.Int64
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Go(func() {
				d, err := l.Allow(ctx, []rate.Limit{phoneLimit(i), b})
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
				for _, c := range d.Budgets[0].Crossed {
					if c == 100 {
						full.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if admitted.Load() != 20 || full.Load() != 1 {
			t.Errorf("got %d admitted and the full threshold crossed %d times, want 20 and once", admitted.Load(), full.Load())
		}
	})
}
