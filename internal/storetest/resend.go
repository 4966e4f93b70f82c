package storetest

import (
	"errors"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// testResend holds what a store does with BeginSend.Seen, the pending verification as the
// caller remembers it: it counts on it while it is the pending one, and otherwise decides on
// what it holds, whatever the caller remembers.
func testResend(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	const phone = "+819012345678"
	resend := func(code string, at time.Time, seen otp.Verification) otp.BeginSend {
		p := fixture.Params(phone, code, at)
		p.Seen = &seen
		return p
	}

	t.Run("SeenPendingVerificationIsCountedOn", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification
		st := e.Send(resend("222222", fixture.Base().Add(time.Minute), a))
		v := st.Verification
		if st.Created || v.ID != a.ID || v.Sends != 2 || fixture.CodeAt(v, "111111") != 0 || fixture.CodeAt(v, "222222") != 1 {
			t.Fatalf("got created=%v id=%s sends=%d, want the second send of %s with both codes", st.Created, v.ID, v.Sends, a.ID)
		}
		if got := e.Verification(a.ID); !equalVerification(got, v) {
			t.Errorf("stored: got %+v, want %+v", got, v)
		}
	})

	t.Run("SeenVerificationClosedElsewhereIsNotCountedOn", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification
		if _, oc := e.Check(a.ID, "111111", fixture.Base().Add(time.Second)); oc != otp.OutcomeApproved {
			t.Fatalf("check: got %s, want approved", oc)
		}
		p := resend("222222", fixture.Base().Add(time.Minute), a) // a as remembered: still pending
		st := e.Send(p)
		v := st.Verification
		if !st.Created || v.ID != p.NewVerificationID || v.Sends != 1 || len(v.CodeHashes) != 1 || fixture.CodeAt(v, "222222") != 0 {
			t.Fatalf("got created=%v id=%s sends=%d, want a new verification %s with the new code", st.Created, v.ID, v.Sends, p.NewVerificationID)
		}
		if got := e.Verification(a.ID); got.Status != otp.StatusApproved || got.Sends != 1 || len(got.CodeHashes) != 1 {
			t.Errorf("approved verification: got %s with %d sends and %d codes, want it unchanged", got.Status, got.Sends, len(got.CodeHashes))
		}
	})

	t.Run("SeenVerificationExpiredAndReplacedElsewhere", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification
		if n, err := e.Store.ExpireVerifications(e.Ctx, fixture.Base().Add(fixture.TTL), 10); err != nil || n != 1 {
			t.Fatalf("ExpireVerifications: got %d, %v; want 1", n, err)
		}
		b := e.Send(fixture.Params(phone, "222222", fixture.Base().Add(fixture.TTL+time.Second))) // another instance's send
		if !b.Created {
			t.Fatalf("send after expiry: got %+v, want a new verification", b)
		}
		st := e.Send(resend("333333", fixture.Base().Add(fixture.TTL+2*time.Second), a))
		v := st.Verification
		if st.Created || v.ID != b.Verification.ID || v.Sends != 2 || fixture.CodeAt(v, "333333") != 1 {
			t.Fatalf("got created=%v id=%s sends=%d, want the second send of the replacement %s, its code hashed for it",
				st.Created, v.ID, v.Sends, b.Verification.ID)
		}
		if got := e.Verification(a.ID); got.Status != otp.StatusExpired || got.Sends != 1 || !got.ClosedAt.Equal(fixture.Base().Add(fixture.TTL)) {
			t.Errorf("expired verification: got %s with %d sends closed %v, want it as the expiry left it", got.Status, got.Sends, got.ClosedAt)
		}
	})

	t.Run("SeenVerificationPastItsExpiryIsClosedAndReplaced", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification
		p := resend("222222", a.ExpiresAt, a)
		st := e.Send(p)
		if !st.Created || st.Verification.ID != p.NewVerificationID || fixture.CodeAt(st.Verification, "222222") != 0 {
			t.Fatalf("got created=%v id=%s, want a new verification %s", st.Created, st.Verification.ID, p.NewVerificationID)
		}
		if got := e.Verification(a.ID); got.Status != otp.StatusExpired || !got.ClosedAt.Equal(a.ExpiresAt) || got.Sends != 1 {
			t.Errorf("seen verification: got %s closed %v with %d sends, want expired at %v with 1", got.Status, got.ClosedAt, got.Sends, a.ExpiresAt)
		}
	})

	t.Run("SeenVerificationWithAnOldCountStillMeetsTheBudget", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := e.Send(fixture.Params(phone, "111111", fixture.Base())).Verification
		for i := 1; i < fixture.MaxSends; i++ { // resent elsewhere up to the budget
			e.Send(fixture.Params(phone, "222222", fixture.Base().Add(time.Duration(i)*time.Second)))
		}
		_, err := e.Store.BeginSend(e.Ctx, resend("333333", fixture.Base().Add(time.Minute), a))
		var budget *otp.ErrSendBudget
		if !errors.As(err, &budget) || budget.MaxSends != fixture.MaxSends {
			t.Fatalf("got error %v, want ErrSendBudget: the stored row has spent its sends", err)
		}
		if got := e.Verification(a.ID); got.Sends != fixture.MaxSends || len(got.CodeHashes) != fixture.MaxSends {
			t.Errorf("got %d sends and %d codes, want %d of each", got.Sends, len(got.CodeHashes), fixture.MaxSends)
		}
	})
}
