package apps_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestRateLimitService(t *testing.T) {
	ctx := t.Context()
	s := apps.NewRateLimitService(inmem.New())
	const app = "0190a000-0000-7000-8000-00000000000a"

	for name, tt := range map[string]struct{ unique, desc, field string }{
		"NoName":      {"", "", "unique_name"},
		"Space":       {"end user", "", "unique_name"},
		"TooLong":     {strings.Repeat("a", 192), "", "unique_name"},
		"DescTooLong": {"ok", strings.Repeat("d", 256), "description"},
		"DescControl": {"ok", "a\x00b", "description"},
		"DescBadUTF8": {"ok", "\xff", "description"},
	} {
		_, err := s.Create(ctx, app, tt.unique, tt.desc)
		var invalid *otp.ErrInvalidRequest
		if !errors.As(err, &invalid) || invalid.Fields[tt.field] == "" {
			t.Errorf("%s: got %v, want invalid_request naming %s", name, err, tt.field)
		}
	}
	rl, err := s.Create(ctx, app, "end_user_id", "per user")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]struct {
		max      int
		interval time.Duration
		field    string
	}{
		"MaxZero":         {0, time.Minute, "max"},
		"MaxTooBig":       {1_000_001, time.Minute, "max"},
		"IntervalZero":    {1, 0, "interval"},
		"IntervalOverDay": {1, 24*time.Hour + time.Second, "interval"},
		"IntervalPartial": {1, 1500 * time.Millisecond, "interval"},
	} {
		_, err := s.AddBucket(ctx, app, rl.ID, b.max, b.interval)
		var invalid *otp.ErrInvalidRequest
		if !errors.As(err, &invalid) || invalid.Fields[b.field] == "" {
			t.Errorf("%s: got %v, want invalid_request naming %s", name, err, b.field)
		}
	}
	if _, err := s.AddBucket(ctx, app, rl.ID, 3, time.Minute); err != nil {
		t.Fatal(err)
	}
	limits, err := s.SendLimits(ctx, app, map[string]string{"end_user_id": "u1"})
	if err != nil || len(limits) != 1 || limits[0].ID != rl.ID || limits[0].Value != "u1" ||
		len(limits[0].Rules) != 1 || limits[0].Rules[0] != (rate.Rule{Limit: 3, Window: time.Minute}) {
		t.Errorf("SendLimits: got %+v, %v; want the bucket as a rule on u1", limits, err)
	}
	_, err = s.SendLimits(ctx, app, map[string]string{"nope": "u1"})
	var invalid *otp.ErrInvalidRequest
	if !errors.As(err, &invalid) || invalid.Fields["RateLimits[nope]"] == "" {
		t.Errorf("an unknown name: got %v, want invalid_request naming RateLimits[nope]", err)
	}
	if _, err := s.SendLimits(ctx, "0190a000-0000-7000-8000-00000000000b", map[string]string{"end_user_id": "u1"}); err == nil {
		t.Errorf("another app's rate limit: admitted, want refused")
	}
}
