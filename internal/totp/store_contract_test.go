package totp_test

import (
	"bytes"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
	"otpgate/internal/totp"
)

// totpFactor is a new unverified factor of entity e, created at.
func totpFactor(e totp.Entity, name string, at time.Time) totp.Factor {
	return totp.Factor{ID: fixture.NewID(), AppID: e.AppID, EntityID: e.ID, Identity: e.Identity, FriendlyName: name,
		Status: totp.FactorUnverified, Config: totp.Config{Alg: totp.SHA256, Digits: 8, Period: 60, Skew: 2},
		Sealed: []byte("sealed " + name), CreatedAt: at, UpdatedAt: at}
}

func testTOTP(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	app, other := fixture.NewID(), fixture.NewID()

	t.Run("AnIdentityIsOneEntityPerApp", func(t *testing.T) {
		e := fixture.New(t, newStore)
		first, created := ensureEntity(e, app, "user-0001", fixture.Base())
		again, createdAgain := ensureEntity(e, app, "user-0001", fixture.Base().Add(time.Minute))
		if !created || createdAgain || again != first {
			t.Errorf("got %+v (created %v) then %+v (created %v), want one entity created once", first, created, again, createdAgain)
		}
		theirs, created := ensureEntity(e, other, "user-0001", fixture.Base())
		if !created || theirs.ID == first.ID {
			t.Errorf("another app's identity: got %+v created %v, want its own entity", theirs, created)
		}
		ensureEntity(e, app, "user-0002", fixture.Base().Add(time.Second))
		list, err := e.Store.Entities(e.Ctx, app)
		if err != nil || len(list) != 2 || list[0].Identity != "user-0001" || list[1].Identity != "user-0002" {
			t.Errorf("Entities: got %+v %v, want user-0001 then user-0002", list, err)
		}
		if _, err := e.Store.Entity(e.Ctx, app, "user-9999"); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("unknown identity: got %v, want otp.ErrNotFound", err)
		}
	})

	t.Run("AFactorReadsBackAsWritten", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ent, _ := ensureEntity(e, app, "user-0001", fixture.Base())
		f := createFactor(e, totpFactor(ent, "phone", fixture.Base()))
		second := createFactor(e, totpFactor(ent, "tablet", fixture.Base().Add(time.Second)))
		got, err := e.Store.Factor(e.Ctx, app, ent.Identity, f.ID)
		if err != nil || got.FriendlyName != f.FriendlyName || got.Config != f.Config || !bytes.Equal(got.Sealed, f.Sealed) ||
			got.Status != totp.FactorUnverified || got.EntityID != ent.ID || got.Identity != ent.Identity || got.LastStep != 0 ||
			!got.CreatedAt.Equal(fixture.Base()) {
			t.Errorf("Factor: got %+v %v, want %+v", got, err, f)
		}
		if _, err := e.Store.Factor(e.Ctx, other, ent.Identity, f.ID); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("another app's factor: got %v, want otp.ErrNotFound", err)
		}
		if _, err := e.Store.Factor(e.Ctx, app, "user-0002", f.ID); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("another entity's factor: got %v, want otp.ErrNotFound", err)
		}
		list, err := e.Store.Factors(e.Ctx, app, ent.Identity)
		if err != nil || len(list) != 2 || list[0].ID != f.ID || list[1].ID != second.ID {
			t.Errorf("Factors: got %+v %v, want phone then tablet", list, err)
		}
		renamed, err := e.Store.RenameFactor(e.Ctx, app, ent.Identity, f.ID, "old phone", fixture.Base().Add(time.Hour))
		if err != nil || renamed.FriendlyName != "old phone" || !renamed.UpdatedAt.Equal(fixture.Base().Add(time.Hour)) {
			t.Errorf("RenameFactor: got %+v %v", renamed, err)
		}
		if err := e.Store.DeleteFactor(e.Ctx, app, ent.Identity, second.ID); err != nil {
			t.Fatalf("DeleteFactor: %v", err)
		}
		if err := e.Store.DeleteFactor(e.Ctx, app, ent.Identity, second.ID); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("second DeleteFactor: got %v, want otp.ErrNotFound", err)
		}
	})

}

// testTOTPSteps holds the cases of testTOTP about accepted steps and challenges.
func testTOTPSteps(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	app, other := fixture.NewID(), fixture.NewID()

	t.Run("AStepIsAcceptedOnceAndOnlyForward", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ent, _ := ensureEntity(e, app, "user-0001", fixture.Base())
		f := createFactor(e, totpFactor(ent, "phone", fixture.Base()))
		got, ok, err := e.Store.AcceptStep(e.Ctx, app, f.ID, 100, fixture.Base().Add(time.Minute))
		if err != nil || !ok || got.LastStep != 100 || got.Status != totp.FactorVerified || !got.UpdatedAt.Equal(fixture.Base().Add(time.Minute)) {
			t.Fatalf("first: got %+v %v %v, want accepted and verified", got, ok, err)
		}
		for _, step := range []int64{100, 99} {
			if got, ok, err := e.Store.AcceptStep(e.Ctx, app, f.ID, step, fixture.Base().Add(2*time.Minute)); err != nil || ok || got.LastStep != 100 {
				t.Errorf("step %d after 100: got %+v %v %v, want refused and unchanged", step, got, ok, err)
			}
		}
		if _, _, err := e.Store.AcceptStep(e.Ctx, other, f.ID, 500, fixture.Base()); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("another app: got %v, want otp.ErrNotFound", err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				if _, ok, err := e.Store.AcceptStep(e.Ctx, app, f.ID, 101, fixture.Base()); err == nil && ok {
					wins.Add(1)
				} else if err != nil {
					t.Errorf("concurrent AcceptStep: %v", err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Errorf("16 concurrent acceptances of one step: got %d accepted, want 1", wins.Load())
		}
	})

	t.Run("ChallengesAreListedNewestFirstAndFiltered", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ent, _ := ensureEntity(e, app, "user-0001", fixture.Base())
		f1 := createFactor(e, totpFactor(ent, "phone", fixture.Base()))
		f2 := createFactor(e, totpFactor(ent, "tablet", fixture.Base()))
		var made []totp.Challenge
		for i, c := range []struct {
			f      totp.Factor
			status totp.ChallengeStatus
		}{{f1, totp.ChallengeDenied}, {f1, totp.ChallengeApproved}, {f2, totp.ChallengeApproved}} {
			ch := totp.Challenge{ID: fixture.NewID(), AppID: app, EntityID: ent.ID, Identity: ent.Identity, FactorID: c.f.ID, Status: c.status,
				CreatedAt: fixture.Base().Add(time.Duration(i) * time.Minute)}
			if err := e.Store.CreateChallenge(e.Ctx, ch); err != nil {
				t.Fatalf("CreateChallenge: %v", err)
			}
			made = append(made, ch)
		}
		got, err := e.Store.Challenge(e.Ctx, app, ent.Identity, made[1].ID)
		if err != nil || got != made[1] {
			t.Errorf("Challenge: got %+v %v, want %+v", got, err, made[1])
		}
		ids := func(list []totp.Challenge) []string {
			var out []string
			for _, c := range list {
				out = append(out, c.ID)
			}
			return out
		}
		for _, c := range []struct {
			factor string
			status totp.ChallengeStatus
			want   []string
		}{
			{"", "", []string{made[2].ID, made[1].ID, made[0].ID}},
			{f1.ID, "", []string{made[1].ID, made[0].ID}},
			{"", totp.ChallengeApproved, []string{made[2].ID, made[1].ID}},
			{f1.ID, totp.ChallengeDenied, []string{made[0].ID}},
		} {
			list, err := e.Store.Challenges(e.Ctx, app, ent.Identity, c.factor, c.status)
			if err != nil || !slices.Equal(ids(list), c.want) {
				t.Errorf("Challenges(%q, %q): got %v %v, want %v", c.factor, c.status, ids(list), err, c.want)
			}
		}
		if err := e.Store.DeleteEntity(e.Ctx, app, ent.Identity); err != nil {
			t.Fatalf("DeleteEntity: %v", err)
		}
		if _, err := e.Store.Factor(e.Ctx, app, ent.Identity, f1.ID); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("a factor of a deleted entity: got %v, want otp.ErrNotFound", err)
		}
		if _, _, err := e.Store.AcceptStep(e.Ctx, app, f1.ID, 5, fixture.Base()); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("accepting for a deleted factor: got %v, want otp.ErrNotFound", err)
		}
		again, created := ensureEntity(e, app, ent.Identity, fixture.Base())
		if !created || again.ID == ent.ID {
			t.Errorf("after deletion: got %+v created %v, want a new entity", again, created)
		}
		if list, err := e.Store.Challenges(e.Ctx, app, ent.Identity, "", ""); err != nil || len(list) != 0 {
			t.Errorf("challenges of the new entity: got %v %v, want none", ids(list), err)
		}
	})
}

// ensureEntity stores the entity of identity in appID, failing the test on error.
func ensureEntity(e *fixture.Env, appID, identity string, at time.Time) (totp.Entity, bool) {
	e.T.Helper()
	got, created, err := e.Store.EnsureEntity(e.Ctx, totp.Entity{ID: fixture.NewID(), AppID: appID, Identity: identity, CreatedAt: at})
	if err != nil {
		e.T.Fatalf("EnsureEntity: %v", err)
	}
	return got, created
}

// createFactor stores f, failing the test on error.
func createFactor(e *fixture.Env, f totp.Factor) totp.Factor {
	e.T.Helper()
	if err := e.Store.CreateFactor(e.Ctx, f); err != nil {
		e.T.Fatalf("CreateFactor: %v", err)
	}
	return f
}
