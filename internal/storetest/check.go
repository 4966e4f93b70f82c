package storetest

import (
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testCheck(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("CorrectCodeApprovesOnce", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		at := fixture.Base().Add(time.Minute)
		v, oc := e.Check(id, "111111", at)
		if oc != otp.OutcomeApproved || v.Status != otp.StatusApproved || !v.ClosedAt.Equal(at) {
			t.Fatalf("got %s status %s closed %v, want approved at %v", oc, v.Status, v.ClosedAt, at)
		}
		if got := e.Verification(id); got.Status != otp.StatusApproved || !got.ClosedAt.Equal(at) {
			t.Errorf("stored: got status %s closed %v, want approved at %v", got.Status, got.ClosedAt, at)
		}
		if _, oc := e.Check(id, "111111", at); oc != otp.OutcomeNotPending {
			t.Errorf("second check: got %s, want %s", oc, otp.OutcomeNotPending)
		}
	})

	t.Run("EveryCodeOfAResendApproves", func(t *testing.T) {
		e := fixture.New(t, newStore)
		for i, code := range []string{"111111", "222222"} {
			phone := "+81901234567" + string(rune('0'+i))
			id := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification.ID
			e.Send(fixture.Params(phone, "222222", fixture.Base().Add(time.Minute)))
			if _, oc := e.Check(id, code, fixture.Base().Add(2*time.Minute)); oc != otp.OutcomeApproved {
				t.Errorf("code %s: got %s, want approved", code, oc)
			}
		}
	})

	t.Run("StaleSeenVerificationIsDecidedAgain", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		cases := []struct {
			name     string
			change   func()
			code     string
			want     otp.CheckOutcome
			attempts int
		}{
			{"AfterAnotherCheck", func() { e.Check(id, "000000", fixture.Base()) }, "000000", otp.OutcomeInvalidCode, 2},
			{"AfterAResend", func() { e.Send(fixture.Params("+819012345678", "222222", fixture.Base().Add(time.Minute))) }, "222222", otp.OutcomeApproved, 2},
		}
		for _, c := range cases {
			seen := e.Verification(id)
			c.change()
			at := fixture.Base().Add(2 * time.Minute)
			v, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{ID: id, ClientIP: "198.51.100.7", Now: at, Seen: &seen}, fixture.DecideCode(c.code, at))
			if err != nil {
				t.Fatalf("%s: Check: %v", c.name, err)
			}
			if fresh := e.Verification(id); oc != c.want || v.Attempts != c.attempts || fresh.Attempts != c.attempts {
				t.Errorf("%s: got %s with attempts %d (stored %d), want %s with %d: decided on the stored state, not the stale one",
					c.name, oc, v.Attempts, fresh.Attempts, c.want, c.attempts)
			}
		}
		if got := e.Verification(id); got.Attempts != 2 || got.Status != otp.StatusApproved {
			t.Errorf("stored: got attempts %d status %s, want 2 wrong guesses counted, then approved", got.Attempts, got.Status)
		}
	})

	t.Run("StaleSeenByPhoneIsDecidedAgain", func(t *testing.T) {
		e := fixture.New(t, newStore)
		const phone = "+819012345679"
		byPhone := func(seen otp.Verification, code string, at time.Time) (otp.Verification, otp.CheckOutcome) {
			t.Helper()
			v, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{Phone: phone, ClientIP: "198.51.100.7", Now: at, Seen: &seen}, fixture.DecideCode(code, at))
			if err != nil {
				t.Fatalf("Check by phone: %v", err)
			}
			return v, oc
		}
		first := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification.ID
		seen := e.Verification(first)
		e.Check(first, "000000", fixture.Base())
		if v, oc := byPhone(seen, "000000", fixture.Base()); oc != otp.OutcomeInvalidCode || v.Attempts != 2 {
			t.Errorf("after another check: got %s with attempts %d, want invalid_code with 2", oc, v.Attempts)
		}
		// It expires, and a send creates the phone's next verification: a check by phone
		// is for the new one, whatever the caller saw of the old.
		seen = e.Verification(first)
		later := fixture.Base().Add(fixture.TTL + time.Minute)
		second := e.Send(fixture.Params(phone, "333333", later)).Verification.ID
		v, oc := byPhone(seen, "333333", later)
		if oc != otp.OutcomeApproved || v.ID != second {
			t.Errorf("after a new verification: got %s on %s, want approved on the new %s", oc, v.ID, second)
		}
		if got := e.Verification(first); got.Status != otp.StatusExpired || got.Attempts != 2 {
			t.Errorf("old verification: got %s with attempts %d, want expired with 2, untouched by the check", got.Status, got.Attempts)
		}
	})

	t.Run("WrongCodeCountsAnAttempt", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		v, oc := e.Check(id, "000000", fixture.Base())
		if oc != otp.OutcomeInvalidCode || v.Attempts != 1 || v.AttemptsLeft() != fixture.MaxAttempts-1 || v.Status != otp.StatusPending {
			t.Errorf("got %s attempts %d status %s, want invalid_code, 1, pending", oc, v.Attempts, v.Status)
		}
		if got := e.Verification(id); got.Attempts != 1 || !got.ClosedAt.IsZero() {
			t.Errorf("stored: got attempts %d closed %v, want 1 and open", got.Attempts, got.ClosedAt)
		}
	})

	t.Run("AttemptBudgetSurvivesResend", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		e.Check(id, "000000", fixture.Base())
		e.Check(id, "000000", fixture.Base())
		if v := e.Send(fixture.Params("+819012345678", "222222", fixture.Base().Add(time.Minute))).Verification; v.Attempts != 2 {
			t.Errorf("after resend: got attempts %d, want 2", v.Attempts)
		}
	})

}

// testCheckClosing holds the cases of testCheck that close a verification or find none.
func testCheckClosing(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ExpiredVerificationIsClosedByCheck", func(t *testing.T) {
		e := fixture.New(t, newStore)
		v := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification
		got, oc := e.Check(v.ID, "111111", v.ExpiresAt)
		if oc != otp.OutcomeExpired || got.Status != otp.StatusExpired || !got.ClosedAt.Equal(v.ExpiresAt) {
			t.Errorf("got %s status %s closed %v, want expired, closed at %v", oc, got.Status, got.ClosedAt, v.ExpiresAt)
		}
	})

	t.Run("CheckByPhoneTakesTheNewestVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		old := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification
		newer := e.Send(fixture.Params("+819012345678", "222222", old.ExpiresAt)).Verification
		decide := fixture.DecideCode("111111", old.ExpiresAt)
		var seen string
		v, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{Phone: "+819012345678", Now: old.ExpiresAt},
			func(v otp.Verification) (otp.Verification, otp.CheckOutcome) { seen = v.ID; return decide(v) })
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		if seen != newer.ID || v.ID != newer.ID || oc != otp.OutcomeInvalidCode {
			t.Errorf("got decide on %s, result %s %s, want %s and invalid_code (the old code is not the new one's)", seen, v.ID, oc, newer.ID)
		}
	})

	t.Run("CheckByPhoneSeesAClosedNewest", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		e.Check(id, "111111", fixture.Base())
		_, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{Phone: "+819012345678", Now: fixture.Base()}, fixture.DecideCode("111111", fixture.Base()))
		if err != nil || oc != otp.OutcomeNotPending {
			t.Errorf("got %s, %v, want not_pending", oc, err)
		}
	})

	t.Run("DecideChangesOnlyStatusAttemptsAndClosedAt", func(t *testing.T) {
		e := fixture.New(t, newStore)
		want := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification
		_, _, err := e.Store.Check(e.Ctx, otp.CheckRef{ID: want.ID, Now: fixture.Base()}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
			v.Address, v.Sends, v.MaxAttempts, v.CodeHashes, v.ExpiresAt = "+10000000000", 99, 99, nil, time.Time{}
			v.Attempts = 3
			return v, otp.OutcomeInvalidCode
		})
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		want.Attempts = 3
		if got := e.Verification(want.ID); !equalVerification(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})

	t.Run("ClosingWithoutClosedAtUsesCheckTime", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		at := fixture.Base().Add(time.Second)
		v, _, err := e.Store.Check(e.Ctx, otp.CheckRef{ID: id, Now: at}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
			v.Status = otp.StatusFailed
			return v, otp.OutcomeTooManyAttempts
		})
		if err != nil || v.Status != otp.StatusFailed || !v.ClosedAt.Equal(at) {
			t.Errorf("got status %s closed %v err %v, want failed closed at %v", v.Status, v.ClosedAt, err, at)
		}
	})

	t.Run("UnknownVerificationIsNotFoundWithoutDeciding", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Send(fixture.Params("+819012345678", "111111", fixture.Base()))
		for _, ref := range []otp.CheckRef{{ID: fixture.NewID()}, {ID: "not-a-uuid"}, {Phone: "+819087654321"}, {}} {
			_, _, err := e.Store.Check(e.Ctx, ref, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
				t.Errorf("decide called for %+v", ref)
				return v, otp.OutcomeNotPending
			})
			fixture.WantNotFound(t, "Check", err)
		}
	})

	t.Run("AttemptsAreRecorded", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		e.Check(id, "000000", fixture.Base().Add(time.Second))
		e.Check(id, "111111", fixture.Base().Add(2*time.Second))
		d, err := e.Store.VerificationDetail(e.Ctx, id)
		if err != nil {
			t.Fatalf("VerificationDetail: %v", err)
		}
		want := []otp.CheckOutcome{otp.OutcomeInvalidCode, otp.OutcomeApproved}
		if len(d.Attempts) != len(want) {
			t.Fatalf("got %d attempts, want %d", len(d.Attempts), len(want))
		}
		for i, a := range d.Attempts {
			if a.Outcome != want[i] || a.VerificationID != id || a.ClientIP != "198.51.100.7" || !a.Time.Equal(fixture.Base().Add(time.Duration(i+1)*time.Second)) {
				t.Errorf("attempt %d: got %+v, want %s at +%ds", i, a, want[i], i+1)
			}
		}
	})
}

// testNewest holds Store.Newest: the app's newest verification of an address, whatever
// its status, which a check by address reads before its limiter call.
func testNewest(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("NewestOfTheAppAndAddress", func(t *testing.T) {
		e := fixture.New(t, newStore)
		const phone = "+819012345670"
		_, err := e.Store.Newest(e.Ctx, "", phone)
		fixture.WantNotFound(t, "before any send", err)
		first := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification.ID
		v, err := e.Store.Newest(e.Ctx, otp.DefaultAppID, phone)
		if err != nil || v.ID != first || v.Status != otp.StatusPending || v.Address != phone || v.AppID != otp.DefaultAppID {
			t.Fatalf("pending: got %+v, %v, want verification %s pending", v, err, first)
		}
		e.Check(first, "111111", fixture.Base().Add(time.Minute))
		if v, err = e.Store.Newest(e.Ctx, "", phone); err != nil || v.ID != first || v.Status != otp.StatusApproved {
			t.Errorf("closed: got %+v, %v, want %s approved: the newest, whatever its status", v, err, first)
		}
		second := e.Send(fixture.Params(phone, "222222", fixture.Base().Add(2*time.Minute))).Verification.ID
		if v, err = e.Store.Newest(e.Ctx, "", phone); err != nil || v.ID != second || v.Status != otp.StatusPending {
			t.Errorf("after a new send: got %+v, %v, want %s pending", v, err, second)
		}
		_, err = e.Store.Newest(e.Ctx, "0190a000-0000-7000-8000-0000000000ff", phone)
		fixture.WantNotFound(t, "another app", err)
		_, err = e.Store.Newest(e.Ctx, "", "+819012345671")
		fixture.WantNotFound(t, "another phone", err)
		_, err = e.Store.Newest(e.Ctx, "not-an-id", phone)
		fixture.WantNotFound(t, "a malformed app id", err)
	})
}
