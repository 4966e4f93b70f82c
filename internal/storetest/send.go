package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testSend(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("FirstSendCreatesPendingVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		st := e.Send(p)
		v := st.Verification
		if !st.Created || v.ID != p.NewVerificationID || v.Status != otp.StatusPending || v.Sends != 1 {
			t.Fatalf("got created=%v id=%s status=%s sends=%d, want true %s pending 1", st.Created, v.ID, v.Status, v.Sends, p.NewVerificationID)
		}
		if !v.ExpiresAt.Equal(fixture.Base().Add(fixture.TTL)) || !v.CreatedAt.Equal(fixture.Base()) || !v.ClosedAt.IsZero() {
			t.Errorf("got created %v expires %v closed %v, want %v, %v, zero", v.CreatedAt, v.ExpiresAt, v.ClosedAt, fixture.Base(), fixture.Base().Add(fixture.TTL))
		}
		if v.Address != p.Phone || v.Channel != "sms" || v.Locale != "en" || v.ClientIP != p.ClientIP || v.MaxAttempts != fixture.MaxAttempts || v.Attempts != 0 {
			t.Errorf("got %+v, want the fields of %+v", v, p)
		}
		if len(v.CodeHashes) != 1 || fixture.CodeAt(v, "111111") != 0 {
			t.Errorf("got code hashes %x, want one hash of the code for the new id", v.CodeHashes)
		}
		if got := e.Verification(v.ID); !equalVerification(got, v) {
			t.Errorf("Verification: got %+v, want %+v", got, v)
		}
	})

	t.Run("SendRowIsWrittenAsSending", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		st := e.Send(p)
		r := e.SendRow(p.SendID)
		if r.SendStatus != otp.SendSending || r.Status != history.StatusSending || r.VerificationID != st.Verification.ID ||
			r.Phone != p.Phone || r.ClientIP != p.ClientIP || r.Provider != "test" || !r.Time.Equal(fixture.Base()) {
			t.Errorf("got %+v, want a sending row of verification %s at %v", r, st.Verification.ID, fixture.Base())
		}
	})

	t.Run("ResendKeepsIDExtendsExpiryAndKeepsEveryCode", func(t *testing.T) {
		e := fixture.New(t, newStore)
		first := e.Send(fixture.Params("+819012345678", "111111", fixture.Base()))
		later := fixture.Base().Add(2 * time.Minute)
		st := e.Send(fixture.Params("+819012345678", "222222", later))
		v := st.Verification
		if st.Created || v.ID != first.Verification.ID || v.Sends != 2 {
			t.Fatalf("got created=%v id=%s sends=%d, want false %s 2", st.Created, v.ID, v.Sends, first.Verification.ID)
		}
		if !v.ExpiresAt.Equal(later.Add(fixture.TTL)) {
			t.Errorf("got expires %v, want %v", v.ExpiresAt, later.Add(fixture.TTL))
		}
		if len(v.CodeHashes) != 2 || fixture.CodeAt(v, "111111") != 0 || fixture.CodeAt(v, "222222") != 1 {
			t.Errorf("got %d code hashes, want both codes' hashes in send order", len(v.CodeHashes))
		}
	})

	t.Run("ExpiredVerificationIsClosedAndReplaced", func(t *testing.T) {
		e := fixture.New(t, newStore)
		old := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification
		at := old.ExpiresAt // expiry is exclusive: at ExpiresAt it is over
		st := e.Send(fixture.Params("+819012345678", "222222", at))
		if !st.Created || st.Verification.ID == old.ID || st.Verification.Sends != 1 {
			t.Fatalf("got created=%v id=%s sends=%d, want a new verification with one send", st.Created, st.Verification.ID, st.Verification.Sends)
		}
		got := e.Verification(old.ID)
		if got.Status != otp.StatusExpired || !got.ClosedAt.Equal(at) {
			t.Errorf("old verification: got status %s closed %v, want expired at %v", got.Status, got.ClosedAt, at)
		}
	})

	t.Run("SendBudgetIsEnforced", func(t *testing.T) {
		e := fixture.New(t, newStore)
		var v otp.Verification
		for i := range fixture.MaxSends {
			v = e.Send(fixture.Params("+819012345678", "11111"+string(rune('0'+i)), fixture.Base().Add(time.Duration(i)*time.Second))).Verification
		}
		p := fixture.Params("+819012345678", "999999", fixture.Base().Add(time.Minute))
		_, err := e.Store.BeginSend(e.Ctx, p)
		var budget *otp.ErrSendBudget
		if !errors.As(err, &budget) || budget.MaxSends != fixture.MaxSends || !budget.ExpiresAt.Equal(v.ExpiresAt) {
			t.Fatalf("got error %v, want ErrSendBudget{%d, %v}", err, fixture.MaxSends, v.ExpiresAt)
		}
		if got := e.Verification(v.ID); got.Sends != fixture.MaxSends || !got.ExpiresAt.Equal(v.ExpiresAt) || len(got.CodeHashes) != fixture.MaxSends {
			t.Errorf("got sends=%d expires=%v hashes=%d, want it unchanged", got.Sends, got.ExpiresAt, len(got.CodeHashes))
		}
		_, err = e.Store.Send(e.Ctx, p.SendID)
		fixture.WantNotFound(t, "refused send's row", err)
	})

	t.Run("PhonesHaveTheirOwnVerifications", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := e.Send(fixture.Params("+819012345678", "111111", fixture.Base()))
		b := e.Send(fixture.Params("+819087654321", "222222", fixture.Base()))
		if !a.Created || !b.Created || a.Verification.ID == b.Verification.ID {
			t.Errorf("got created %v/%v ids %s/%s, want two new verifications", a.Created, b.Created, a.Verification.ID, b.Verification.ID)
		}
	})

	t.Run("UnknownOrMalformedIDIsNotFound", func(t *testing.T) {
		e := fixture.New(t, newStore)
		for _, id := range []string{fixture.NewID(), "not-a-uuid", ""} {
			_, err := e.Store.Verification(e.Ctx, id)
			fixture.WantNotFound(t, "Verification("+id+")", err)
		}
	})

	t.Run("TimesAreKeptToTheMicrosecond", func(t *testing.T) {
		e := fixture.New(t, newStore)
		v := e.Send(fixture.Params("+819012345678", "111111", fixture.Base().Add(1999*time.Nanosecond))).Verification
		if want := fixture.Base().Add(time.Microsecond); !v.CreatedAt.Equal(want) || v.CreatedAt.Location() != time.UTC {
			t.Errorf("got created %v, want %v in UTC", v.CreatedAt, want)
		}
	})

	t.Run("CanceledContextIsUnavailable", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ctx, cancel := context.WithCancel(e.Ctx)
		cancel()
		_, err := e.Store.BeginSend(ctx, fixture.Params("+819012345678", "111111", fixture.Base()))
		if !errors.Is(err, otp.ErrUnavailable) {
			t.Errorf("got error %v, want ErrUnavailable", err)
		}
	})
}

// equalVerification compares stored state, times by instant.
func equalVerification(a, b otp.Verification) bool {
	if len(a.CodeHashes) != len(b.CodeHashes) {
		return false
	}
	for i := range a.CodeHashes {
		if !bytes.Equal(a.CodeHashes[i], b.CodeHashes[i]) {
			return false
		}
	}
	return a.ID == b.ID && a.Address == b.Address && a.Channel == b.Channel && a.Locale == b.Locale &&
		a.Status == b.Status && a.Sends == b.Sends && a.Attempts == b.Attempts && a.MaxAttempts == b.MaxAttempts &&
		a.ClientIP == b.ClientIP && a.CreatedAt.Equal(b.CreatedAt) && a.ExpiresAt.Equal(b.ExpiresAt) && a.ClosedAt.Equal(b.ClosedAt)
}
