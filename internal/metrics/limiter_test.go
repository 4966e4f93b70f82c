package metrics

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/ratelimit"
	"otpgate/internal/testenv"
)

func TestLimiterMetrics(t *testing.T) {
	ctx := context.Background()
	policy := []rate.Limit{
		{Scope: "phone", Key: "+819012345678", Rules: []rate.Rule{{Limit: 1, Window: time.Minute}, {Limit: 10, Window: time.Hour}}},
		{Scope: "ip", Key: "192.0.2.1", Rules: []rate.Rule{{Limit: 5, Window: time.Minute}}},
	}

	t.Run("DecisionsAreCountedPerRule", func(t *testing.T) {
		rdb, prefix := testenv.Redis(t)
		m := New()
		l := m.Limiter(ratelimit.New(rdb, prefix))
		if d, err := l.Allow(ctx, policy); err != nil || !d.Allowed {
			t.Fatalf("first: got %v %v, want allowed", d.Allowed, err)
		}
		if d, err := l.Allow(ctx, policy); err != nil || d.Allowed {
			t.Fatalf("second: got %v %v, want denied", d.Allowed, err)
		}
		for _, c := range []struct {
			scope, rule, result string
			want                float64
		}{
			{"phone", "1/1m", "allowed", 1},
			{"phone", "1/1m", "denied", 1},
			{"phone", "10/1h", "allowed", 2},
			{"phone", "10/1h", "denied", 0},
			{"ip", "5/1m", "allowed", 2},
		} {
			got := counter(t, m, "otpgate_limiter_rule_decisions_total", "scope", c.scope, "rule", c.rule, "result", c.result)
			if got != c.want {
				t.Errorf("%s %s %s: got %v, want %v", c.scope, c.rule, c.result, got, c.want)
			}
		}
		for result, want := range map[string]float64{"allowed": 1, "denied": 1, "error": 0} {
			if got := counter(t, m, "otpgate_limiter_decisions_total", "result", result); got != want {
				t.Errorf("decisions %s: got %v, want %v", result, got, want)
			}
		}
		if got := observations(t, m, "otpgate_limiter_duration_seconds", "op", "allow"); got != 2 {
			t.Errorf("allow observations: got %v, want 2", got)
		}
	})

	t.Run("RefundInspectAndResetAreTimedAndPassedThrough", func(t *testing.T) {
		rdb, prefix := testenv.Redis(t)
		m := New()
		l := m.Limiter(ratelimit.New(rdb, prefix))
		d, err := l.Allow(ctx, policy)
		if err != nil || !d.Allowed {
			t.Fatalf("allow: got %v %v, want allowed", d.Allowed, err)
		}
		if err := l.Refund(ctx, d.Reservation); err != nil {
			t.Fatalf("refund: %v", err)
		}
		if states, err := l.Inspect(ctx, policy[0]); err != nil || len(states) != 2 || states[0].Used != 0 {
			t.Fatalf("inspect after refund: got %+v %v, want 2 rules with nothing used", states, err)
		}
		if _, err := l.Allow(ctx, policy); err != nil {
			t.Fatalf("allow: %v", err)
		}
		if err := l.Reset(ctx, "phone", policy[0].Key); err != nil {
			t.Fatalf("reset: %v", err)
		}
		if states, err := l.Inspect(ctx, policy[0]); err != nil || states[0].Used != 0 {
			t.Fatalf("inspect after reset: got %+v %v, want nothing used", states, err)
		}
		for op, want := range map[string]uint64{"allow": 2, "refund": 1, "inspect": 2, "reset": 1} {
			if got := observations(t, m, "otpgate_limiter_duration_seconds", "op", op); got != want {
				t.Errorf("%s observations: got %v, want %v", op, got, want)
			}
		}
	})

	t.Run("UnreachableRedisIsAnError", func(t *testing.T) {
		rdb, prefix := testenv.Redis(t)
		proxy := testenv.NewProxy(t, rdb.Options().Addr)
		cut := redis.NewClient(&redis.Options{Addr: proxy.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
		t.Cleanup(func() { cut.Close() })
		proxy.Cut()
		m := New()
		l := m.Limiter(ratelimit.New(cut, prefix))
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := l.Allow(tctx, policy); err == nil || !errors.Is(err, otp.ErrUnavailable) {
			t.Fatalf("got %v, want an error wrapping otp.ErrUnavailable", err)
		}
		if got := counter(t, m, "otpgate_limiter_decisions_total", "result", "error"); got != 1 {
			t.Errorf("errors: got %v, want 1", got)
		}
		if got := find(t, m, "otpgate_limiter_rule_decisions_total"); got != nil {
			t.Errorf("got rule decisions %v, want none for a failed call", got)
		}
	})
}
