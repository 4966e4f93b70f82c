package ratelimit

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/rate"
)

func TestRefund(t *testing.T) { onBackends(t, testRefund) }

func testRefund(t *testing.T, newLimiter backend) {
	ctx := context.Background()

	t.Run("RestoresExactlyOneSlot", func(t *testing.T) {
		l, rdb := newLimiter(t)
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "3/1m")}
		var last rate.Decision
		for range 3 {
			last = mustAllow(t, l, phone)
		}
		if d := mustAllow(t, l, phone); d.Allowed {
			t.Fatalf("fourth request: got allowed, want denied")
		}
		if err := l.Refund(ctx, last.Reservation); err != nil {
			t.Fatalf("Refund: %v", err)
		}
		if got, want := count(t, l, rdb, phone), int64(2); got != want {
			t.Errorf("after refund: got %d entries, want %d", got, want)
		}
		if d := mustAllow(t, l, phone); !d.Allowed {
			t.Fatalf("after refund: got denied, want allowed")
		}
		if d := mustAllow(t, l, phone); d.Allowed {
			t.Errorf("one refund admitted two requests")
		}
	})

	t.Run("RemovesTheReservationFromEveryKey", func(t *testing.T) {
		l, rdb := newLimiter(t)
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "5/1m")}
		ip := rate.Limit{Scope: "ip", Key: "192.0.2.1", Rules: mustRules(t, "5/1m")}
		mustAllow(t, l, phone, ip)
		d := mustAllow(t, l, phone, ip)
		if err := l.Refund(ctx, d.Reservation); err != nil {
			t.Fatalf("Refund: %v", err)
		}
		for _, lim := range []rate.Limit{phone, ip} {
			if got, want := count(t, l, rdb, lim), int64(1); got != want {
				t.Errorf("%s: got %d entries, want %d", lim.Scope, got, want)
			}
		}
	})

	t.Run("UnknownOrRepeatedRefundChangesNothing", func(t *testing.T) {
		l, rdb := newLimiter(t)
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "5/1m")}
		mustAllow(t, l, phone)
		d := mustAllow(t, l, phone)
		for i := range 2 {
			if err := l.Refund(ctx, d.Reservation); err != nil {
				t.Fatalf("Refund %d: %v", i+1, err)
			}
		}
		unknown := rate.NewReservation(&reservation{id: "not-an-id00", keys: reservationOf(d).keys})
		foreign := rate.NewReservation("a reservation of another limiter")
		idOnly := rate.NewReservation(&reservation{id: reservationOf(d).id})
		for _, r := range []rate.Reservation{unknown, {}, foreign, idOnly} {
			if err := l.Refund(ctx, r); err != nil {
				t.Fatalf("Refund(%+v): %v", r, err)
			}
		}
		if got, want := count(t, l, rdb, phone), int64(1); got != want {
			t.Errorf("got %d entries, want %d", got, want)
		}
	})
}

func TestInspect(t *testing.T) { onBackends(t, testInspect) }

func testInspect(t *testing.T, newLimiter backend) {
	ctx := context.Background()

	t.Run("ReportsWithoutRecording", func(t *testing.T) {
		l, rdb := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "2/1m,5/1h")}
		mustAllow(t, l, phone)
		c.Add(10 * time.Second)
		mustAllow(t, l, phone)
		c.Add(5 * time.Second)
		for range 3 {
			states, err := l.Inspect(ctx, phone)
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			want := []rate.RuleState{
				{Scope: "phone", Key: phone.Key, Rule: phone.Rules[0], Used: 2, Remaining: 0,
					ResetAfter: 45 * time.Second, RetryAfter: 45 * time.Second, Violated: true},
				{Scope: "phone", Key: phone.Key, Rule: phone.Rules[1], Used: 2, Remaining: 3,
					ResetAfter: time.Hour - 15*time.Second},
			}
			if len(states) != len(want) || states[0] != want[0] || states[1] != want[1] {
				t.Fatalf("got %+v, want %+v", states, want)
			}
		}
		if got, want := count(t, l, rdb, phone), int64(2); got != want {
			t.Errorf("got %d entries, want %d", got, want)
		}
	})

	t.Run("UnknownKeyIsEmpty", func(t *testing.T) {
		l, _ := newLimiter(t)
		states, err := l.Inspect(ctx, rate.Limit{Scope: "ip", Key: "192.0.2.9", Rules: mustRules(t, "10/1h")})
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		want := rate.RuleState{Scope: "ip", Key: "192.0.2.9", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Remaining: 10}
		if len(states) != 1 || states[0] != want {
			t.Errorf("got %+v, want [%+v]", states, want)
		}
	})
}

func TestReset(t *testing.T) { onBackends(t, testReset) }

func testReset(t *testing.T, newLimiter backend) {
	ctx := context.Background()
	l, rdb := newLimiter(t)
	phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: mustRules(t, "1/1h")}
	ip := rate.Limit{Scope: "ip", Key: "192.0.2.1", Rules: mustRules(t, "1/1h")}
	mustAllow(t, l, phone)
	mustAllow(t, l, ip)
	if err := l.Reset(ctx, "phone", phone.Key); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if d := mustAllow(t, l, phone); !d.Allowed {
		t.Errorf("phone after reset: got denied, want allowed")
	}
	if got, want := count(t, l, rdb, ip), int64(1); got != want {
		t.Errorf("ip: got %d entries, want %d untouched", got, want)
	}
}

func TestKey(t *testing.T) {
	l := New(nil, "otp:rl:")
	if got, want := l.Key("phone", "+819012345678"), "otp:rl:{phone:+819012345678}"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
