package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"otpgate/internal/rate"
)

// Time-dependent behaviour, on a test clock to the microsecond and on the server's clock.
func TestWindows(t *testing.T) { onBackends(t, testWindows) }

func testWindows(t *testing.T, newLimiter backend) {
	t.Run("SlidingNotFixedWindow", func(t *testing.T) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		lim := rate.Limit{Scope: "ip", Key: "192.0.2.1", Rules: mustRules(t, "3/1m")}
		// Requests at 0:50, 0:55 and 1:05, then one at 1:45. A window fixed to whole minutes
		// would admit the fourth (its minute holds one other); the sliding minute holds three.
		c.Add(50 * time.Second)
		mustAllow(t, l, lim)
		c.Add(5 * time.Second)
		mustAllow(t, l, lim)
		c.Add(10 * time.Second)
		if d := mustAllow(t, l, lim); !d.Allowed {
			t.Fatalf("third request: got denied, want allowed")
		}
		c.Add(40 * time.Second)
		d := mustAllow(t, l, lim)
		if d.Allowed {
			t.Fatalf("fourth request inside the sliding minute: got allowed, want denied")
		}
		if got, want := d.Rules[0].RetryAfter, 5*time.Second; got != want {
			t.Errorf("got retry after %v, want %v", got, want)
		}
		c.Add(5 * time.Second) // 1:50: the request of 0:50 leaves the window
		d = mustAllow(t, l, lim)
		if !d.Allowed {
			t.Fatalf("at the boundary: got denied, want allowed")
		}
		if got, want := d.Rules[0].Used, 3; got != want {
			t.Errorf("got used %d, want %d", got, want)
		}
	})

	t.Run("WindowBoundaryIsExclusive", func(t *testing.T) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		lim := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1s")}
		mustAllow(t, l, lim)
		c.Add(time.Second - time.Microsecond)
		d := mustAllow(t, l, lim)
		if d.Allowed {
			t.Fatalf("1µs before the window ends: got allowed, want denied")
		}
		if got, want := d.Rules[0].RetryAfter, time.Microsecond; got != want {
			t.Errorf("got retry after %v, want %v", got, want)
		}
		c.Add(time.Microsecond)
		if d := mustAllow(t, l, lim); !d.Allowed {
			t.Errorf("when the window ends: got denied, want allowed")
		}
	})

	t.Run("RetryAfterIsExact", func(t *testing.T) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		lim := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "3/10s")}
		steps := []time.Duration{0, 1234567 * time.Microsecond, 2 * time.Second}
		for _, s := range steps {
			c.Add(s)
			mustAllow(t, l, lim)
		}
		c.Add(time.Second)
		// Entries at 0, 1.234567s and 3.234567s; now 4.234567s. One more fits once the
		// oldest leaves at 10s: 5.765433s from now. The window empties 6s after the last.
		d := mustAllow(t, l, lim)
		if got, want := d.Rules[0].RetryAfter, 5765433*time.Microsecond; got != want {
			t.Errorf("got retry after %v, want %v", got, want)
		}
		if got, want := d.Rules[0].ResetAfter, 5765433*time.Microsecond; got != want {
			t.Errorf("got reset after %v, want %v", got, want)
		}
		c.Add(5765432 * time.Microsecond)
		if d := mustAllow(t, l, lim); d.Allowed {
			t.Fatalf("1µs early: got allowed, want denied")
		}
		c.Add(time.Microsecond)
		d = mustAllow(t, l, lim)
		if !d.Allowed {
			t.Fatalf("at retry after: got denied, want allowed")
		}
		// Now full again: entries at 1.234567s, 3.234567s, 10s; the next slot opens when
		// 1.234567s leaves, at 11.234567s, 1.234567s from now.
		if got, want := d.Rules[0].RetryAfter, 1234567*time.Microsecond; got != want {
			t.Errorf("after recording: got retry after %v, want %v", got, want)
		}
	})

	t.Run("RetryAfterCountsOnlyTheEntriesThatMustLeave", func(t *testing.T) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		// 2/1m and 3/1h on one key: the hour rule needs its oldest entry gone, the
		// minute rule its second newest.
		lim := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "2/1m,3/1h")}
		mustAllow(t, l, lim) // 0
		c.Add(30 * time.Minute)
		mustAllow(t, l, lim) // 30m
		c.Add(30 * time.Second)
		mustAllow(t, l, lim) // 30m30s
		c.Add(10 * time.Second)
		d := mustAllow(t, l, lim) // 30m40s
		if d.Allowed {
			t.Fatalf("got allowed, want denied")
		}
		minute, hour := d.Rules[0], d.Rules[1]
		if got, want := minute.RetryAfter, 20*time.Second; got != want || !minute.Violated {
			t.Errorf("2/1m: got retry after %v violated %v, want %v true", got, minute.Violated, want)
		}
		if got, want := hour.RetryAfter, 29*time.Minute+20*time.Second; got != want || !hour.Violated {
			t.Errorf("3/1h: got retry after %v violated %v, want %v true", got, hour.Violated, want)
		}
		if got, want := d.RetryAfter(), 29*time.Minute+20*time.Second; got != want {
			t.Errorf("decision: got retry after %v, want %v", got, want)
		}
	})

	t.Run("UsesTheServerClock", func(t *testing.T) {
		ctx := context.Background()
		l, rdb := newLimiter(t)
		lim := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "2/1m,5/1h")}
		start := time.Now()
		before, err := rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		d := mustAllow(t, l, lim)
		after, err := rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		score, err := rdb.ZScore(ctx, l.Key(lim.Scope, lim.Key), reservationOf(d).id).Result()
		if err != nil {
			t.Fatal(err)
		}
		at := time.UnixMicro(int64(score))
		if at.Before(before) || at.After(after) {
			t.Errorf("got score %v, want between server times %v and %v", at, before, after)
		}
		if got := d.Rules[1].ResetAfter; got <= time.Hour-after.Sub(before) || got > time.Hour {
			t.Errorf("got reset after %v, want just under 1h", got)
		}
		ttl, err := rdb.PTTL(ctx, l.Key(lim.Scope, lim.Key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		// The key expires one longest window after it was written: no less than 1h minus
		// the time that has passed since, and the millisecond Redis's clock may tick
		// within it (exactly 1h where the clock does not run, as on miniredis); never more.
		if ttl < time.Hour-time.Since(start)-time.Millisecond || ttl > time.Hour {
			t.Errorf("got ttl %v, want the longest window, 1h", ttl)
		}
		d = mustAllow(t, l, lim)
		if d = mustAllow(t, l, lim); d.Allowed {
			t.Fatalf("third request: got allowed, want denied")
		}
		if got := d.Rules[0].RetryAfter; got <= 59*time.Second || got > time.Minute {
			t.Errorf("got retry after %v, want just under 1m", got)
		}
	})

	t.Run("TrimsEntriesOlderThanTheLongestWindow", func(t *testing.T) {
		l, rdb := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		lim := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "2/1s,3/2s")}
		for i := range 20 {
			if i > 0 {
				c.Add(700 * time.Millisecond)
			}
			if d := mustAllow(t, l, lim); !d.Allowed {
				t.Fatalf("request %d: got denied, want allowed", i+1)
			}
		}
		// The last request came at 13.3s; the longest window keeps what came after 11.3s:
		// 11.9s, 12.6s and 13.3s. Older entries were trimmed on the way.
		if got, want := count(t, l, rdb, lim), int64(3); got != want {
			t.Errorf("got %d entries, want %d", got, want)
		}
	})

	t.Run("ClockStepBackNeverAdmitsMore", func(t *testing.T) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		lim := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1m")}
		mustAllow(t, l, lim)
		c.Add(-10 * time.Second)
		d := mustAllow(t, l, lim)
		if d.Allowed {
			t.Fatalf("after the clock stepped back: got allowed, want denied")
		}
		if got, want := d.Rules[0].RetryAfter, 70*time.Second; got != want {
			t.Errorf("got retry after %v, want %v", got, want)
		}
	})

	t.Run("LimitsBeyondWhatOneReadCovers", func(t *testing.T) {
		l, rdb := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		ids := 0
		l.NewID = func() string { ids++; return fmt.Sprintf("id-%08d", ids) }
		lim := rate.Limit{Scope: "global", Key: "all", Rules: mustRules(t, "20/10s,120/1h")}
		for i := range 120 {
			if i > 0 {
				c.Add(time.Second)
			}
			if d := mustAllow(t, l, lim); !d.Allowed {
				t.Fatalf("request %d: got denied, want allowed", i+1)
			}
		}
		c.Add(time.Second) // now 120s; entries at 0s, 1s, ... 119s
		d := mustAllow(t, l, lim)
		want := []rate.RuleState{
			{Scope: "global", Key: "all", Rule: lim.Rules[0], Used: 9, Remaining: 11, ResetAfter: time.Second},
			{Scope: "global", Key: "all", Rule: lim.Rules[1], Used: 120, Remaining: 0,
				ResetAfter: time.Hour - 120*time.Second, RetryAfter: time.Hour - 120*time.Second, Violated: true},
		}
		if d.Allowed || d.Rules[0] != want[0] || d.Rules[1] != want[1] {
			t.Fatalf("got allowed %v %+v, want denied %+v", d.Allowed, d.Rules, want)
		}
		// The first request's id lies beyond what one read covers; a retry of it is still
		// recognised.
		ids = 0
		if d := mustAllow(t, l, lim); !d.Allowed || !d.Replayed || d.Rules[1].Used != 120 {
			t.Errorf("retry of the first request: got %+v, want allowed, replayed, 120 used", d)
		}
		if got, want := count(t, l, rdb, lim), int64(120); got != want {
			t.Errorf("got %d entries, want %d", got, want)
		}
		ids = 1000
		c.Add(time.Hour - 120*time.Second)
		if d := mustAllow(t, l, lim); !d.Allowed || d.Replayed || d.Rules[1].Used != 120 {
			t.Errorf("once the first request left the hour: got %+v, want allowed with 120 used", d)
		}
	})
}
