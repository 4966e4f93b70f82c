package ratelimit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a settable test clock; safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

// newClock starts a clock at a fixed time on a whole minute.
func newClock() *clock { return &clock{t: time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// mustLimiter returns a limiter on the shared Redis under a key prefix of this test, and a
// client to look at its keys.
func mustLimiter(tb testing.TB) (*Limiter, *redis.Client) {
	tb.Helper()
	rdb, prefix := testenv.Redis(tb)
	return New(rdb, prefix), rdb
}

// backend makes a limiter under a key prefix of the calling test, and a client to look at
// its keys.
type backend func(tb testing.TB) (*Limiter, *redis.Client)

// onBackends runs test on real Redis and on miniredis, which dev mode runs the same script on.
func onBackends(t *testing.T, test func(t *testing.T, newLimiter backend)) {
	t.Run("Redis", func(t *testing.T) { test(t, mustLimiter) })
	t.Run("Miniredis", func(t *testing.T) { test(t, mustMiniredisLimiter) })
}

// mustRules parses rules or ends the test.
func mustRules(tb testing.TB, s string) []rate.Rule {
	tb.Helper()
	rules, err := rate.ParseRules(s)
	if err != nil {
		tb.Fatalf("rate.ParseRules(%q): %v", s, err)
	}
	return rules
}

// mustAllow calls Allow and ends the test on an error.
func mustAllow(tb testing.TB, l *Limiter, limits ...rate.Limit) rate.Decision {
	tb.Helper()
	d, err := l.Allow(context.Background(), limits)
	if err != nil {
		tb.Fatalf("Allow: %v", err)
	}
	return d
}

// count returns how many entries a limit's key holds.
func count(tb testing.TB, l *Limiter, rdb redis.Cmdable, lim rate.Limit) int64 {
	tb.Helper()
	n, err := rdb.ZCard(context.Background(), l.Key(lim.Scope, lim.Key)).Result()
	if err != nil {
		tb.Fatalf("ZCARD: %v", err)
	}
	return n
}

func TestAllow(t *testing.T) { onBackends(t, testAllow) }

func testAllow(t *testing.T, newLimiter backend) {
	ctx := context.Background()

	t.Run("AdmitsUpToTheLimitThenDenies", func(t *testing.T) {
		l, rdb := newLimiter(t)
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "3/1m")}
		for i := range 3 {
			d := mustAllow(t, l, phone)
			if !d.Allowed {
				t.Fatalf("request %d: got denied, want allowed", i+1)
			}
			if got, want := d.Rules[0].Used, i+1; got != want {
				t.Errorf("request %d: got used %d, want %d", i+1, got, want)
			}
			if got, want := d.Rules[0].Remaining, 2-i; got != want {
				t.Errorf("request %d: got remaining %d, want %d", i+1, got, want)
			}
		}
		d := mustAllow(t, l, phone)
		if d.Allowed {
			t.Fatalf("request 4: got allowed, want denied")
		}
		if got := d.Violations(); len(got) != 1 || got[0].Rule != phone.Rules[0] {
			t.Errorf("got violations %+v, want the 3/1m rule", got)
		}
		if reservationOf(d).id != "" {
			t.Errorf("got reservation %+v for a denial, want none", d.Reservation)
		}
		if got, want := count(t, l, rdb, phone), int64(3); got != want {
			t.Errorf("got %d entries, want %d", got, want)
		}
	})

	t.Run("DeniedRequestIsNotRecorded", func(t *testing.T) {
		l, rdb := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1m")}
		mustAllow(t, l, phone)
		for range 5 {
			c.Add(10 * time.Second)
			if d := mustAllow(t, l, phone); d.Allowed {
				t.Fatalf("got allowed within the window, want denied")
			}
		}
		if got, want := count(t, l, rdb, phone), int64(1); got != want {
			t.Errorf("got %d entries, want %d", got, want)
		}
		c.Add(10 * time.Second) // one minute after the first request
		if d := mustAllow(t, l, phone); !d.Allowed {
			t.Errorf("got denied once the window passed, want allowed: denials must not extend the lockout")
		}
	})

	t.Run("AllOrNothing", func(t *testing.T) {
		l, rdb := newLimiter(t)
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1m,10/1h")}
		ip := rate.Limit{Scope: "ip", Key: "192.0.2.1", Rules: mustRules(t, "1/1m")}
		mustAllow(t, l, ip)
		d := mustAllow(t, l, phone, ip)
		if d.Allowed {
			t.Fatalf("got allowed, want denied by the ip rule")
		}
		if got, want := count(t, l, rdb, phone), int64(0); got != want {
			t.Errorf("got %d phone entries, want %d", got, want)
		}
		v := d.Violations()
		if len(v) != 1 || v[0].Scope != "ip" {
			t.Errorf("got violations %+v, want only ip", v)
		}
		if got, want := len(d.Rules), 3; got != want {
			t.Fatalf("got %d rule states, want %d", got, want)
		}
		if got := d.Rules[0]; got.Scope != "phone" || got.Used != 0 || got.Remaining != 1 || got.Violated {
			t.Errorf("got phone state %+v, want untouched", got)
		}
	})

	t.Run("ReportsEveryViolatedRule", func(t *testing.T) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1m,2/1h")}
		ip := rate.Limit{Scope: "ip", Key: "192.0.2.1", Rules: mustRules(t, "1/1m")}
		mustAllow(t, l, phone, ip)
		c.Add(2 * time.Minute)
		mustAllow(t, l, phone, ip)
		c.Add(time.Second)
		d := mustAllow(t, l, phone, ip)
		var got []string
		for _, v := range d.Violations() {
			got = append(got, v.Scope+" "+v.Rule.String())
		}
		want := []string{"phone 1/1m", "phone 2/1h", "ip 1/1m"}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("got violations %v, want %v", got, want)
		}
		// 2/1h admits again when the first request, 2m1s ago, leaves the hour.
		if got, want := d.RetryAfter(), time.Hour-2*time.Minute-time.Second; got != want {
			t.Errorf("got retry after %v, want %v", got, want)
		}
	})

	t.Run("RetryIsReplayedNotCounted", func(t *testing.T) {
		l, rdb := newLimiter(t)
		l.NewID = func() string { return "fixed-id-01" }
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1m")}
		ip := rate.Limit{Scope: "ip", Key: "192.0.2.1", Rules: mustRules(t, "5/1m")}
		first := mustAllow(t, l, phone, ip)
		if !first.Allowed || first.Replayed {
			t.Fatalf("first call: got allowed %v replayed %v, want true false", first.Allowed, first.Replayed)
		}
		again := mustAllow(t, l, phone, ip)
		if !again.Allowed || !again.Replayed {
			t.Fatalf("same id again: got allowed %v replayed %v, want true true", again.Allowed, again.Replayed)
		}
		if got, want := again.Rules[1].Used, 1; got != want {
			t.Errorf("ip: got used %d, want %d", got, want)
		}
		if got, want := reservationOf(again), reservationOf(first); got.id != want.id || len(got.keys) != len(want.keys) {
			t.Errorf("got reservation %+v, want %+v", got, want)
		}
		for _, lim := range []rate.Limit{phone, ip} {
			if got, want := count(t, l, rdb, lim), int64(1); got != want {
				t.Errorf("%s: got %d entries, want %d", lim.Scope, got, want)
			}
		}
	})

	t.Run("EmptyPolicyIsAllowed", func(t *testing.T) {
		l, _ := newLimiter(t)
		d := mustAllow(t, l, rate.Limit{Scope: "global", Key: "all"})
		if !d.Allowed || len(d.Rules) != 0 || reservationOf(d).id != "" {
			t.Errorf("got %+v, want allowed with nothing recorded", d)
		}
	})

	t.Run("BadPolicyIsAnError", func(t *testing.T) {
		l, _ := newLimiter(t)
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1m")}
		for name, limits := range map[string][]rate.Limit{
			"ZeroLimit":    {{Scope: "phone", Key: "+1", Rules: []rate.Rule{{Limit: 0, Window: time.Minute}}}},
			"ZeroWindow":   {{Scope: "phone", Key: "+1", Rules: []rate.Rule{{Limit: 1}}}},
			"DuplicateKey": {phone, phone},
		} {
			if _, err := l.Allow(ctx, limits); err == nil || errors.Is(err, otp.ErrUnavailable) {
				t.Errorf("%s: got error %v, want a policy error", name, err)
			}
		}
	})
}

func TestNoScriptFallsBackToEval(t *testing.T) {
	srv := testenv.StartRedis(t)
	rdb := srv.Client()
	l := New(rdb, testenv.KeyPrefix(t))
	lim := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "2/1m")}
	mustAllow(t, l, lim)
	if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatalf("SCRIPT FLUSH: %v", err)
	}
	d := mustAllow(t, l, lim)
	if !d.Allowed || d.Rules[0].Used != 2 {
		t.Errorf("after SCRIPT FLUSH: got allowed %v used %d, want true 2", d.Allowed, d.Rules[0].Used)
	}
	if d := mustAllow(t, l, lim); d.Allowed {
		t.Errorf("third request: got allowed, want denied")
	}
}

// reservationOf is what the limiter recorded an allowed decision under; the zero
// reservation for a decision that recorded nothing.
func reservationOf(d rate.Decision) reservation {
	if r, ok := d.Reservation.Value().(*reservation); ok {
		return *r
	}
	return reservation{}
}
