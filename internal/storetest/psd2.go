package storetest

import (
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/psd2"
	"otpgate/internal/storetest/fixture"
)

// testPSD2 holds the transaction a PSD2 send names, and the apps' PSD2 flag.
func testPSD2(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	payment := psd2.Transaction{Amount: "€39.99", Payee: "Acme Öl GmbH"}

	t.Run("TheVerificationKeepsItsSendsTransaction", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		p.Transaction = payment
		st := e.Send(p)
		if st.Verification.Transaction != payment {
			t.Errorf("BeginSend: got %+v, want %+v", st.Verification.Transaction, payment)
		}
		if got := e.Verification(st.Verification.ID).Transaction; got != payment {
			t.Errorf("Verification: got %+v, want %+v", got, payment)
		}

		other := psd2.Transaction{Amount: "EUR 10", Payee: "Other Ltd"}
		p = fixture.Params("+819012345678", "222222", fixture.Base().Add(time.Minute))
		p.Transaction = other
		re := e.Send(p)
		if re.Created || re.Verification.ID != st.Verification.ID || re.Verification.Transaction != other {
			t.Errorf("resend: got %+v created=%v, want the same verification on %+v", re.Verification, re.Created, other)
		}
		v, oc := e.Check(st.Verification.ID, "222222", fixture.Base().Add(2*time.Minute))
		if oc != otp.OutcomeApproved || v.Transaction != other {
			t.Errorf("Check: got %s with %+v, want approved with %+v", oc, v.Transaction, other)
		}
		if got := e.Verification(st.Verification.ID).Transaction; got != other {
			t.Errorf("after the check: got %+v, want %+v", got, other)
		}
	})

	t.Run("ASendWithoutOneHasNone", func(t *testing.T) {
		e := fixture.New(t, newStore)
		st := e.Send(fixture.Params("+819012345678", "111111", fixture.Base()))
		if got := e.Verification(st.Verification.ID).Transaction; !got.IsZero() {
			t.Errorf("got %+v, want none", got)
		}
	})

	t.Run("AnAppsPSD2FlagIsKept", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a := fixture.NewApp(fixture.AppA)
		a.PSD2 = true
		if err := e.Store.CreateApp(e.Ctx, a, fixture.Audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		got, err := e.Store.AppByID(e.Ctx, fixture.AppA)
		if err != nil || !got.PSD2 {
			t.Fatalf("AppByID: got PSD2=%v, %v; want true", got.PSD2, err)
		}
		got.PSD2 = false
		if err := e.Store.UpdateApp(e.Ctx, got, fixture.Audit(apps.ActionAppUpdate)); err != nil {
			t.Fatalf("UpdateApp: %v", err)
		}
		if again, err := e.Store.AppByID(e.Ctx, fixture.AppA); err != nil || again.PSD2 {
			t.Errorf("after the update: got PSD2=%v, %v; want false", again.PSD2, err)
		}
	})
}
