package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
)

// Dev mode runs the very same script on miniredis; this proves it does.
func TestMiniredis(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	phone := otp.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "2/1m,5/1h")}
	ip := otp.Limit{Scope: "ip", Key: "192.0.2.1", Rules: mustRules(t, "3/1m")}

	t.Run("AllowDenyRefundInspectOnTheServerClock", func(t *testing.T) {
		l := New(rdb, "mini:")
		first := mustAllow(t, l, phone, ip)
		if !first.Allowed || first.Rules[0].Used != 1 || first.Rules[2].Used != 1 {
			t.Fatalf("first: got %+v, want allowed with one used", first)
		}
		if got := first.Rules[1].ResetAfter; got <= 59*time.Minute || got > time.Hour {
			t.Errorf("got reset after %v, want just under 1h", got)
		}
		second := mustAllow(t, l, phone, ip)
		if !second.Allowed {
			t.Fatalf("second: got denied, want allowed")
		}
		third := mustAllow(t, l, phone, ip)
		if third.Allowed || len(third.Violations()) != 1 || third.Violations()[0].Rule != phone.Rules[0] {
			t.Fatalf("third: got %+v, want denied by 2/1m", third)
		}
		if ttl := m.TTL(l.Key("phone", phone.Key)); ttl != time.Hour {
			t.Errorf("got ttl %v, want 1h", ttl)
		}
		if err := l.Refund(ctx, second.Reservation); err != nil {
			t.Fatalf("Refund: %v", err)
		}
		states, err := l.Inspect(ctx, ip)
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		if got, want := states[0].Used, 1; got != want {
			t.Errorf("ip after refund: got used %d, want %d", got, want)
		}
		if d := mustAllow(t, l, phone, ip); !d.Allowed {
			t.Errorf("after refund: got denied, want allowed")
		}
	})

	t.Run("RetryIsReplayed", func(t *testing.T) {
		l := New(rdb, "mini-replay:")
		l.NewID = func() string { return "fixed-id-03" }
		mustAllow(t, l, phone)
		if d := mustAllow(t, l, phone); !d.Allowed || !d.Replayed || d.Rules[0].Used != 1 {
			t.Errorf("got %+v, want allowed, replayed, one used", d)
		}
	})

	t.Run("RetryAfterIsExact", func(t *testing.T) {
		l := New(rdb, "mini-clock:")
		c := newClock()
		l.Clock = c.Now
		mustAllow(t, l, phone)
		c.Add(1234567 * time.Microsecond)
		mustAllow(t, l, phone)
		c.Add(time.Second)
		d := mustAllow(t, l, phone)
		if got, want := d.Rules[0].RetryAfter, time.Minute-2234567*time.Microsecond; d.Allowed || got != want {
			t.Errorf("got allowed %v retry after %v, want false %v", d.Allowed, got, want)
		}
		c.Add(d.Rules[0].RetryAfter)
		if d := mustAllow(t, l, phone); !d.Allowed {
			t.Errorf("at retry after: got denied, want allowed")
		}
	})

	t.Run("LimitsBeyondWhatOneReadCovers", func(t *testing.T) {
		l := New(rdb, "mini-big:")
		c := newClock()
		l.Clock = c.Now
		lim := otp.Limit{Scope: "global", Key: "all", Rules: mustRules(t, "101/1h")}
		for i := range 101 {
			if i > 0 {
				c.Add(time.Second)
			}
			mustAllow(t, l, lim)
		}
		c.Add(time.Second)
		d := mustAllow(t, l, lim)
		if got := d.Rules[0]; d.Allowed || got.Used != 101 || got.RetryAfter != time.Hour-101*time.Second {
			t.Errorf("got allowed %v %+v, want denied, 101 used, retry after %v", d.Allowed, got, time.Hour-101*time.Second)
		}
	})
}
