package otp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestKeyedRateLimits(t *testing.T) {
	ctx := context.Background()
	perMinute := []rate.Rule{{Limit: 3, Window: time.Minute}}

	t.Run("TheyJoinTheSendsOneLimiterCall", func(t *testing.T) {
		e := newEnv(t)
		limits := []rate.KeyedLimit{
			{ID: "rk-b", Name: "session", Value: "s-42", Rules: perMinute},
			{ID: "rk-a", Name: "end_user_id", Value: "user-1", Rules: perMinute},
			{ID: "rk-c", Name: "no_buckets", Value: "x"},
		}
		if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP, RateLimits: limits}); err != nil {
			t.Fatalf("send: %v", err)
		}
		allows := e.limiter.Allows()
		if len(allows) != 1 {
			t.Fatalf("limiter asked %d times, want once", len(allows))
		}
		var keyed []rate.Limit
		phone := false
		for _, l := range allows[0] {
			switch l.Scope {
			case rate.ScopeRateLimit:
				keyed = append(keyed, l)
			case otp.ScopePhone:
				phone = true
			}
		}
		if !phone || len(keyed) != 2 {
			t.Fatalf("policy: got %+v, want the phone's rules and the two rate limits with buckets in it", allows[0])
		}
		app := e.cfg.DefaultApp()
		for _, l := range keyed {
			if !strings.HasPrefix(l.Key, app.ID+"|rk-") || strings.Contains(l.Key, "user-1") || strings.Contains(l.Key, "s-42") {
				t.Errorf("key %q: want the app, the rate limit and a hash of the value", l.Key)
			}
		}
		if keyed[0].Key > keyed[1].Key {
			t.Errorf("keys %q, %q: want a fixed order", keyed[0].Key, keyed[1].Key)
		}
	})

	t.Run("TheSameValueIsTheSameKeyAnotherIsAnother", func(t *testing.T) {
		e := newEnv(t)
		key := func(value string) string {
			t.Helper()
			before := len(e.limiter.Allows())
			_, _ = e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP, RateLimits: []rate.KeyedLimit{{ID: "rk", Name: "u", Value: value, Rules: perMinute}}})
			for _, l := range e.limiter.Allows()[before] {
				if l.Scope == rate.ScopeRateLimit {
					return l.Key
				}
			}
			t.Fatal("no rate limit in the policy")
			return ""
		}
		a, b, c := key("user-1"), key("user-1"), key("user-2")
		if a != b || a == c {
			t.Errorf("got %q, %q, %q; want the first two equal, the third another", a, b, c)
		}
	})

	t.Run("BadValuesAreRefusedBeforeAnythingIsSpent", func(t *testing.T) {
		e := newEnv(t)
		for name, value := range map[string]string{"Empty": "", "TooLong": strings.Repeat("x", 257), "Control": "a\nb", "InvalidUTF8": "\xff"} {
			_, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP, RateLimits: []rate.KeyedLimit{{ID: "rk", Name: "u", Value: value, Rules: perMinute}}})
			var invalid *otp.ErrInvalidRequest
			if !errors.As(err, &invalid) || invalid.Fields["rate_limits.u"] == "" {
				t.Errorf("%s: got %v, want invalid_request naming rate_limits.u", name, err)
			}
		}
		if n := len(e.limiter.Allows()); n != 0 {
			t.Errorf("limiter asked %d times, want never", n)
		}
	})
}
