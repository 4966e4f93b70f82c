package ratelimit

import (
	"context"
	"math"
	"testing"

	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// TestGuardCluster runs the guard's all-or-nothing across slots: a guard in one slot and a
// sorted set in another are decided in turn, with compensation, as any two slots are.
func TestGuardCluster(t *testing.T) {
	ctx := context.Background()
	cluster := testenv.RedisCluster(t)
	// slotted returns a phone limit and a prefix guard on different masters, the phone's
	// slot first when phoneFirst.
	slotted := func(t *testing.T, l *Limiter, floor int, phoneRules string, phoneFirst bool) (phone, g rate.Limit) {
		low, high := [2]int{0, 5000}, [2]int{11000, 16383}
		if !phoneFirst {
			low, high = high, low
		}
		phone = rate.Limit{Scope: "phone", Key: keyIn(l, "phone", "+8190%08d", 0, low[0], low[1]), Rules: mustRules(t, phoneRules)}
		g = rate.Limit{Scope: rate.ScopePrefix, Key: keyIn(l, rate.ScopePrefix, "+8190%03d", 0, high[0], high[1]), Guard: testGuard(floor, false)}
		return phone, g
	}

	t.Run("ATripUndoesTheSlotsBefore", func(t *testing.T) {
		rdb := cluster.Client()
		l := New(rdb, testenv.KeyPrefix(t))
		phone, g := slotted(t, l, 1, "5/1m", true)
		d := mustAllow(t, l, phone, g)
		if d.Allowed || !d.Guards[0].Tripped {
			t.Fatalf("got allowed %v guard %+v, want a trip", d.Allowed, d.Guards[0])
		}
		if got := count(t, l, rdb, phone); got != 0 {
			t.Errorf("phone: got %d entries, want 0", got)
		}
		if d := mustAllow(t, l, phone, g); d.Allowed || !d.Guards[0].Blocked || d.Guards[0].Tripped {
			t.Errorf("next send: got %+v, want refused by the block", d.Guards[0])
		}
	})

	t.Run("ADenialUndoesTheGuardsCount", func(t *testing.T) {
		rdb := cluster.Client()
		l := New(rdb, testenv.KeyPrefix(t))
		phone, g := slotted(t, l, 10, "1/1m", false)
		mustAllow(t, l, phone)
		if d := mustAllow(t, l, phone, g); d.Allowed {
			t.Fatal("got allowed, want denied by the phone")
		}
		if s, _ := counts(t, l, rdb, g); !near(s, 0) {
			t.Errorf("got %v recent sends, want the undone one gone", s)
		}
	})

	t.Run("RefundAcrossSlotsTakesTheSendBackOnce", func(t *testing.T) {
		rdb := cluster.Client()
		l := New(rdb, testenv.KeyPrefix(t))
		phone, g := slotted(t, l, 10, "5/1m", true)
		mustAllow(t, l, phone, g)
		d := mustAllow(t, l, phone, g)
		for range 2 {
			if err := l.Refund(ctx, d.Reservation); err != nil {
				t.Fatalf("Refund: %v", err)
			}
		}
		if s, _ := counts(t, l, rdb, g); math.Abs(s-1) > 1e-3 {
			t.Errorf("got %v recent sends, want 1", s)
		}
		if got := count(t, l, rdb, phone); got != 1 {
			t.Errorf("phone: got %d entries, want 1", got)
		}
	})

	t.Run("ApproveReachesEverySlot", func(t *testing.T) {
		rdb := cluster.Client()
		l := New(rdb, testenv.KeyPrefix(t))
		_, g := slotted(t, l, 10, "5/1m", true)
		country := rate.Limit{Scope: rate.ScopeCountry, Key: keyIn(l, rate.ScopeCountry, "C%d", 0, 0, 5000), Guard: g.Guard}
		mustAllow(t, l, g, country)
		if err := l.Approve(ctx, []rate.Limit{g, country}, 1); err != nil {
			t.Fatalf("Approve: %v", err)
		}
		for _, lim := range []rate.Limit{g, country} {
			if _, a := counts(t, l, rdb, lim); math.Abs(a-1) > 1e-3 {
				t.Errorf("%s: got %v approvals, want 1", lim.Scope, a)
			}
		}
	})
}
