package appstest

import (
	"errors"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// testRateLimits holds apps' rate limits and their buckets.
func testRateLimits(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	store := func(t *testing.T, e *fixture.Env) apps.RateLimitStore {
		s, ok := e.Store.(apps.RateLimitStore)
		if !ok {
			t.Fatalf("%T is no apps.RateLimitStore", e.Store)
		}
		return s
	}
	at := fixture.Base()

	t.Run("CreateListUpdateDelete", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := store(t, e)
		login := apps.RateLimit{ID: fixture.NewID(), AppID: fixture.AppA, UniqueName: "end_user_id", Description: "per user", CreatedAt: at, UpdatedAt: at}
		other := apps.RateLimit{ID: fixture.NewID(), AppID: fixture.AppB, UniqueName: "end_user_id", CreatedAt: at, UpdatedAt: at}
		for _, r := range []apps.RateLimit{login, other} {
			if err := s.CreateRateLimit(e.Ctx, r); err != nil {
				t.Fatalf("CreateRateLimit: %v", err)
			}
		}
		dup := login
		dup.ID = fixture.NewID()
		fixture.WantInvalid(t, "a second rate limit of the same name", s.CreateRateLimit(e.Ctx, dup), "unique_name")

		b1 := apps.Bucket{ID: fixture.NewID(), RateLimitID: login.ID, Max: 3, Interval: time.Minute, CreatedAt: at, UpdatedAt: at}
		b2 := apps.Bucket{ID: fixture.NewID(), RateLimitID: login.ID, Max: 10, Interval: time.Hour, CreatedAt: at.Add(time.Second), UpdatedAt: at.Add(time.Second)}
		for _, b := range []apps.Bucket{b1, b2} {
			if err := s.CreateBucket(e.Ctx, fixture.AppA, b); err != nil {
				t.Fatalf("CreateBucket: %v", err)
			}
		}
		if err := s.CreateBucket(e.Ctx, fixture.AppB, apps.Bucket{ID: fixture.NewID(), RateLimitID: login.ID, Max: 1, Interval: time.Second, CreatedAt: at}); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("a bucket on another app's rate limit: got %v, want not found", err)
		}

		list, err := s.RateLimits(e.Ctx, fixture.AppA)
		if err != nil || len(list) != 1 {
			t.Fatalf("RateLimits: got %+v, %v; want one", list, err)
		}
		got := list[0]
		if got.ID != login.ID || got.UniqueName != "end_user_id" || got.Description != "per user" || !got.CreatedAt.Equal(at) ||
			len(got.Buckets) != 2 || got.Buckets[0].ID != b1.ID || got.Buckets[0].Max != 3 || got.Buckets[0].Interval != time.Minute ||
			got.Buckets[1].Max != 10 || got.Buckets[1].Interval != time.Hour {
			t.Errorf("RateLimits: got %+v, want %+v with buckets %+v, %+v", got, login, b1, b2)
		}

		if err := s.UpdateRateLimit(e.Ctx, fixture.AppA, login.ID, "per end user", at.Add(time.Minute)); err != nil {
			t.Errorf("UpdateRateLimit: %v", err)
		}
		b1.Max, b1.Interval, b1.UpdatedAt = 5, 2*time.Minute, at.Add(time.Minute)
		if err := s.UpdateBucket(e.Ctx, fixture.AppA, b1); err != nil {
			t.Errorf("UpdateBucket: %v", err)
		}
		if err := s.UpdateBucket(e.Ctx, fixture.AppB, b1); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("UpdateBucket of another app: got %v, want not found", err)
		}
		if err := s.DeleteBucket(e.Ctx, fixture.AppA, login.ID, b2.ID); err != nil {
			t.Errorf("DeleteBucket: %v", err)
		}
		list, _ = s.RateLimits(e.Ctx, fixture.AppA)
		if len(list) != 1 || list[0].Description != "per end user" || !list[0].UpdatedAt.Equal(at.Add(time.Minute)) ||
			len(list[0].Buckets) != 1 || list[0].Buckets[0].Max != 5 || list[0].Buckets[0].Interval != 2*time.Minute {
			t.Errorf("after the changes: got %+v", list)
		}

		if err := s.DeleteRateLimit(e.Ctx, fixture.AppB, login.ID); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("DeleteRateLimit by another app: got %v, want not found", err)
		}
		if err := s.DeleteRateLimit(e.Ctx, fixture.AppA, login.ID); err != nil {
			t.Errorf("DeleteRateLimit: %v", err)
		}
		if list, _ := s.RateLimits(e.Ctx, fixture.AppA); len(list) != 0 {
			t.Errorf("after the delete: got %+v, want none", list)
		}
		if list, _ := s.RateLimits(e.Ctx, fixture.AppB); len(list) != 1 || list[0].ID != other.ID {
			t.Errorf("the other app's: got %+v, want its own", list)
		}
		for name, err := range map[string]error{
			"UpdateRateLimit": s.UpdateRateLimit(e.Ctx, fixture.AppA, login.ID, "x", at),
			"DeleteRateLimit": s.DeleteRateLimit(e.Ctx, fixture.AppA, login.ID),
			"DeleteBucket":    s.DeleteBucket(e.Ctx, fixture.AppA, login.ID, b1.ID),
			"NotAUUID":        s.DeleteRateLimit(e.Ctx, fixture.AppA, "nope"),
		} {
			if !errors.Is(err, otp.ErrNotFound) {
				t.Errorf("%s of a deleted rate limit: got %v, want not found", name, err)
			}
		}
	})

	t.Run("TheDefaultAppHasItsOwn", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := store(t, e)
		r := apps.RateLimit{ID: fixture.NewID(), AppID: otp.DefaultAppID, UniqueName: "session", CreatedAt: at, UpdatedAt: at}
		if err := s.CreateRateLimit(e.Ctx, r); err != nil {
			t.Fatal(err)
		}
		if list, err := s.RateLimits(e.Ctx, otp.DefaultAppID); err != nil || len(list) != 1 || list[0].Buckets != nil {
			t.Errorf("got %+v, %v; want the one rate limit, no buckets", list, err)
		}
	})
}
