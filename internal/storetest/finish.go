package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testFinish(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("SentKeepsProviderMessageID", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		st := e.Send(p)
		at := fixture.Base().Add(time.Second)
		err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendSent, ProviderID: "SM123", Now: at})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		e.MustFlush()
		r := e.SendRow(p.SendID)
		if r.SendStatus != otp.SendSent || r.ProviderMessageID != "SM123" || !r.Updated.Equal(at) || !r.Time.Equal(fixture.Base()) {
			t.Errorf("got %+v, want sent with SM123 updated at %v", r, at)
		}
	})

	t.Run("FailedKeepsErrorAndVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		st := e.Send(p)
		err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Error: "timeout", Now: fixture.Base()})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		e.MustFlush()
		if r := e.SendRow(p.SendID); r.SendStatus != otp.SendFailed || r.Error != "timeout" || r.Status != history.StatusFailed {
			t.Errorf("got %+v, want failed with its error", r)
		}
		if v := e.Verification(st.Verification.ID); v.Status != otp.StatusPending || v.Sends != 1 {
			t.Errorf("got status %s sends %d, want pending with 1 send (delivery unknown is not undone)", v.Status, v.Sends)
		}
	})

	t.Run("UndoOfCreatingSendCancelsVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		st := e.Send(p)
		at := fixture.Base().Add(time.Second)
		err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Undo: true, Created: true, Now: at})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		v := e.Verification(st.Verification.ID)
		if v.Status != otp.StatusCanceled || !v.ClosedAt.Equal(at) || v.Sends != 0 {
			t.Errorf("got status %s closed %v sends %d, want canceled at %v with 0 sends", v.Status, v.ClosedAt, v.Sends, at)
		}
		if next := e.Send(fixture.Params("+819012345678", "222222", at)); !next.Created {
			t.Errorf("next send: got created=false, want a new verification after the canceled one")
		}
	})

	t.Run("UndoOfResendGivesTheSendBack", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Send(fixture.Params("+819012345678", "111111", fixture.Base()))
		p := fixture.Params("+819012345678", "222222", fixture.Base().Add(time.Minute))
		st := e.Send(p)
		err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Undo: true, Now: fixture.Base().Add(time.Minute)})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		if v := e.Verification(st.Verification.ID); v.Status != otp.StatusPending || v.Sends != 1 {
			t.Errorf("got status %s sends %d, want pending with 1 send", v.Status, v.Sends)
		}
		for i := 1; i < fixture.MaxSends; i++ { // the budget has room for the given-back send again
			e.Send(fixture.Params("+819012345678", "33333"+string(rune('0'+i)), fixture.Base().Add(2*time.Minute)))
		}
	})

	t.Run("UndoOfCreatingSendJoinedByResendOnlyUncounts", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		st := e.Send(p)
		e.Send(fixture.Params("+819012345678", "222222", fixture.Base().Add(time.Second)))
		err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Undo: true, Created: true, Now: fixture.Base().Add(2 * time.Second)})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		if v := e.Verification(st.Verification.ID); v.Status != otp.StatusPending || v.Sends != 1 {
			t.Errorf("got status %s sends %d, want pending with 1 send: the resend's code is out there", v.Status, v.Sends)
		}
	})

	t.Run("UnknownSendIsNotFoundOrDropped", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := fixture.NewID()
		// A store that queues outcomes cannot tell at once; it drops the outcome instead.
		if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: id, Status: otp.SendSent, Now: fixture.Base()}); err != nil {
			fixture.WantNotFound(t, "FinishSend("+id+")", err)
		}
		e.MustFlush()
		_, err := e.Store.Send(e.Ctx, id)
		fixture.WantNotFound(t, "the unknown send after FinishSend", err)
		err = e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: "not-a-uuid", Status: otp.SendSent, Now: fixture.Base()})
		fixture.WantNotFound(t, "FinishSend(not-a-uuid)", err)
	})
}
