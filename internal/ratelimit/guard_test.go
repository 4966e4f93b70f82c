package ratelimit

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/rate"
)

// testGuard is a guard as the defaults configure it, with a small floor.
func testGuard(floor int, shadow bool) *rate.Guard {
	return &rate.Guard{Floor: floor, Shadow: shadow, Params: rate.GuardParams{
		ShortHorizon: 10 * time.Minute, LongHorizon: 7 * 24 * time.Hour,
		Ratio: 0.3, PriorRate: 0.6, PriorWeight: 20, Block: 12 * time.Hour, YoungApprovals: 5,
	}}
}

// guarded is a prefix limit with only a guard.
func guarded(g *rate.Guard) rate.Limit {
	return rate.Limit{Scope: rate.ScopePrefix, Key: "+8190123", Guard: g}
}

// counts reads a guard's stored counts: recent sends and approvals, as of their last update.
func counts(tb testing.TB, l *Limiter, rdb redis.Cmdable, lim rate.Limit) (sends, approvals float64) {
	tb.Helper()
	v, err := rdb.HMGet(context.Background(), l.guardKey(l.Key(lim.Scope, lim.Key)), "ss", "as").Result()
	if err != nil {
		tb.Fatalf("HMGET: %v", err)
	}
	num := func(x any) float64 {
		s, _ := x.(string)
		f, _ := strconv.ParseFloat(s, 64)
		return f
	}
	return num(v[0]), num(v[1])
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestGuard(t *testing.T) { onBackends(t, testGuardBehaviour) }

func testGuardBehaviour(t *testing.T, newLimiter backend) {
	ctx := context.Background()
	phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: []rate.Rule{{Limit: 100, Window: time.Hour}}}
	clocked := func(t *testing.T) (*Limiter, *redis.Client, *clock) {
		l, rdb := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		return l, rdb, c
	}

	t.Run("TripsAtTheFloorWithoutApprovals", func(t *testing.T) {
		l, rdb, c := clocked(t)
		g := guarded(testGuard(3, false))
		for i := range 2 {
			if d := mustAllow(t, l, g); !d.Allowed || d.Guards[0].Blocked {
				t.Fatalf("send %d: got %+v, want allowed and clear", i+1, d)
			}
		}
		d := mustAllow(t, l, g, phone)
		gs := d.Guards[0]
		if d.Allowed || !gs.Blocked || !gs.Tripped || gs.Shadow || gs.RetryAfter != 12*time.Hour || gs.Unapproved != 2 {
			t.Fatalf("third send: got allowed %v guard %+v, want denied by a trip of 12h after 2 unapproved", d.Allowed, gs)
		}
		if got := count(t, l, rdb, phone); got != 0 {
			t.Errorf("the refused send was recorded: got %d phone entries, want 0", got)
		}
		c.Add(time.Hour)
		d = mustAllow(t, l, g)
		if gs := d.Guards[0]; d.Allowed || !gs.Blocked || gs.Tripped || gs.RetryAfter != 11*time.Hour {
			t.Errorf("an hour later: got allowed %v guard %+v, want blocked for 11h more", d.Allowed, gs)
		}
		if b, ok := d.Block(); !ok || b.Key != g.Key {
			t.Errorf("Block: got %+v %v, want the prefix", b, ok)
		}
		if s, _ := counts(t, l, rdb, g); !near(s, 2) {
			t.Errorf("got %v recent sends stored, want the 2 admitted", s)
		}
		c.Add(11 * time.Hour)
		if d := mustAllow(t, l, g); !d.Allowed {
			t.Errorf("after the block: got %+v, want allowed", d.Guards[0])
		}
	})

	t.Run("ApprovalsKeepItClear", func(t *testing.T) {
		l, _, c := clocked(t)
		g := guarded(testGuard(3, false))
		for i := range 30 {
			d := mustAllow(t, l, g)
			if !d.Allowed {
				t.Fatalf("send %d: got %+v, want allowed", i+1, d.Guards[0])
			}
			c.Add(10 * time.Second)
			if i%5 != 4 { // four in five approved
				if err := l.Approve(ctx, []rate.Limit{g}, 1); err != nil {
					t.Fatalf("Approve: %v", err)
				}
			}
		}
	})

	t.Run("TheBaselineExplainsALowConversion", func(t *testing.T) {
		// A target whose history converts at 20% may keep converting at 10%: that is not
		// below 0.3 of its own baseline. A fresh target at 10% is (0.3 of the prior 0.6).
		l, _, c := clocked(t)
		g := guarded(testGuard(5, false))
		for i := range 300 { // history: 300 sends over a day, one in five approved
			if d := mustAllow(t, l, g); !d.Allowed {
				t.Fatalf("history send %d: got %+v, want allowed", i+1, d.Guards[0])
			}
			if i%5 == 0 {
				if err := l.Approve(ctx, []rate.Limit{g}, 1); err != nil {
					t.Fatal(err)
				}
			}
			c.Add(5 * time.Minute)
		}
		c.Add(time.Hour) // the recent horizon forgets the history; the baseline keeps it
		fresh := rate.Limit{Scope: rate.ScopePrefix, Key: "+8190999", Guard: g.Guard}
		for i := range 20 {
			old, young := mustAllow(t, l, g), mustAllow(t, l, fresh)
			if !old.Allowed {
				t.Fatalf("established send %d: got %+v, want allowed", i+1, old.Guards[0])
			}
			if i%10 == 0 {
				if err := l.Approve(ctx, []rate.Limit{g, fresh}, 1); err != nil {
					t.Fatal(err)
				}
			}
			if !young.Allowed {
				if i < 4 {
					t.Errorf("fresh target tripped at send %d, before its floor", i+1)
				}
				return
			}
			c.Add(10 * time.Second)
		}
		t.Errorf("the fresh target never tripped at 10%% conversion")
	})

	t.Run("ShadowReportsAndAdmits", func(t *testing.T) {
		l, rdb, _ := clocked(t)
		g := guarded(testGuard(2, true))
		mustAllow(t, l, g)
		d := mustAllow(t, l, g)
		if gs := d.Guards[0]; !d.Allowed || !gs.Tripped || !gs.Shadow || !gs.Blocked {
			t.Fatalf("second send: got allowed %v guard %+v, want allowed, a shadow trip", d.Allowed, gs)
		}
		d = mustAllow(t, l, g)
		if gs := d.Guards[0]; !d.Allowed || gs.Tripped || !gs.Shadow || !gs.Blocked {
			t.Errorf("third send: got allowed %v guard %+v, want allowed, would block", d.Allowed, gs)
		}
		if _, refused := d.Block(); refused {
			t.Errorf("Block: a shadow guard refused")
		}
		if got, want := d.ShadowReport(), "fraud_guard prefix +8190123"; got != want {
			t.Errorf("ShadowReport: got %q, want %q", got, want)
		}
		if s, _ := counts(t, l, rdb, g); !near(s, 3) {
			t.Errorf("got %v recent sends, want all 3 counted", s)
		}
		// Enforcing, the guard takes no shadow block for its own, but decides afresh and trips.
		enforce := guarded(testGuard(2, false))
		if d := mustAllow(t, l, enforce); d.Allowed || !d.Guards[0].Tripped {
			t.Errorf("enforcing after shadow: got %+v, want a trip of its own", d.Guards[0])
		}
	})

	t.Run("ShadowRuleCountsButNeverRefuses", func(t *testing.T) {
		l, rdb, _ := clocked(t)
		lim := rate.Limit{Scope: rate.ScopePrefix, Key: "+8190123", Rules: []rate.Rule{{Limit: 2, Window: time.Minute, Shadow: true}}}
		var d rate.Decision
		for i := range 3 {
			if d = mustAllow(t, l, lim); !d.Allowed {
				t.Fatalf("send %d: got denied, want allowed", i+1)
			}
			if got, want := d.Rules[0].Violated, i == 2; got != want {
				t.Errorf("send %d: got would-refuse %v, want %v", i+1, got, want)
			}
		}
		if got := d.Violations(); len(got) != 0 {
			t.Errorf("Violations: got %+v, want none", got)
		}
		if got, want := d.ShadowReport(), "prefix 2/1m:shadow"; got != want {
			t.Errorf("ShadowReport: got %q, want %q", got, want)
		}
		if _, ok := d.Closest(); ok {
			t.Errorf("Closest: a shadow rule made the rate-limit headers")
		}
		if got := count(t, l, rdb, lim); got != 3 {
			t.Errorf("got %d entries, want 3: shadow rules record like any rule", got)
		}
	})

	t.Run("DeniedRequestIsNotCounted", func(t *testing.T) {
		l, rdb, _ := clocked(t)
		g := guarded(testGuard(10, false))
		one := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: []rate.Rule{{Limit: 1, Window: time.Minute}}}
		mustAllow(t, l, one, g)
		if d := mustAllow(t, l, one, g); d.Allowed {
			t.Fatal("second send: got allowed, want denied by the phone")
		}
		if s, _ := counts(t, l, rdb, g); !near(s, 1) {
			t.Errorf("got %v recent sends, want 1", s)
		}
	})

	t.Run("RetryIsReplayed", func(t *testing.T) {
		l, rdb, _ := clocked(t)
		l.NewID = func() string { return "fixed-id-03" }
		g := guarded(testGuard(10, false))
		mustAllow(t, l, g)
		if d := mustAllow(t, l, g); !d.Allowed || !d.Replayed {
			t.Errorf("got allowed %v replayed %v, want both", d.Allowed, d.Replayed)
		}
		if s, _ := counts(t, l, rdb, g); !near(s, 1) {
			t.Errorf("got %v recent sends, want 1", s)
		}
	})

	t.Run("CountsDecay", func(t *testing.T) {
		l, rdb, c := clocked(t)
		g := guarded(testGuard(10, false))
		mustAllow(t, l, g)
		c.Add(10 * time.Minute) // one short horizon
		mustAllow(t, l, g)
		if s, _ := counts(t, l, rdb, g); !near(s, 1+math.Exp(-1)) {
			t.Errorf("got %v recent sends, want 1 + 1/e", s)
		}
	})

	t.Run("RefundTakesTheSendBackOnce", func(t *testing.T) {
		l, rdb, c := clocked(t)
		g := guarded(testGuard(10, false))
		mustAllow(t, l, g, phone)
		d := mustAllow(t, l, g, phone)
		c.Add(time.Minute)
		for range 2 {
			if err := l.Refund(ctx, d.Reservation); err != nil {
				t.Fatalf("Refund: %v", err)
			}
		}
		// One send left, decayed by a minute like the taken-back one: exp(-1/10).
		if s, _ := counts(t, l, rdb, g); !near(s, math.Exp(-0.1)) {
			t.Errorf("got %v recent sends, want %v", s, math.Exp(-0.1))
		}
		// Without a sorted set to tell, a guard alone takes its send back.
		alone := mustAllow(t, l, g)
		if err := l.Refund(ctx, alone.Reservation); err != nil {
			t.Fatalf("Refund: %v", err)
		}
		if s, _ := counts(t, l, rdb, g); !near(s, math.Exp(-0.1)) {
			t.Errorf("guard alone: got %v recent sends, want %v", s, math.Exp(-0.1))
		}
	})

	t.Run("LiftEndsTheBlockAndStartsAfresh", func(t *testing.T) {
		l, rdb, _ := clocked(t)
		g := guarded(testGuard(2, false))
		mustAllow(t, l, g)
		if d := mustAllow(t, l, g); !d.Guards[0].Tripped {
			t.Fatalf("got %+v, want a trip", d.Guards[0])
		}
		if err := l.Lift(ctx, g.Scope, g.Key); err != nil {
			t.Fatalf("Lift: %v", err)
		}
		if d := mustAllow(t, l, g); !d.Allowed || d.Guards[0].Blocked {
			t.Errorf("after the lift: got %+v, want allowed and clear", d.Guards[0])
		}
		if s, _ := counts(t, l, rdb, g); !near(s, 1) {
			t.Errorf("got %v recent sends, want only the one after the lift", s)
		}
	})

	t.Run("ApprovalOfAnUnknownTargetCreatesNothing", func(t *testing.T) {
		l, rdb, _ := clocked(t)
		g := guarded(testGuard(2, false))
		if err := l.Approve(ctx, []rate.Limit{g}, 1); err != nil {
			t.Fatalf("Approve: %v", err)
		}
		if n, err := rdb.Exists(ctx, l.guardKey(l.Key(g.Scope, g.Key))).Result(); err != nil || n != 0 {
			t.Errorf("got %d keys (%v), want none", n, err)
		}
	})

	t.Run("GuardsMustShareTheirSettings", func(t *testing.T) {
		l, _, _ := clocked(t)
		other := testGuard(2, false)
		other.Params.Ratio = 0.5
		_, err := l.Allow(ctx, []rate.Limit{guarded(testGuard(2, false)), {Scope: rate.ScopeCountry, Key: "JP", Guard: other}})
		if err == nil {
			t.Error("got no error, want one for guards with different settings")
		}
	})
}
