package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

func testFinish(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("SentKeepsProviderMessageID", func(t *testing.T) {
		e := newEnv(t, newStore)
		p := params("+819012345678", "111111", base())
		st := e.send(p)
		at := base().Add(time.Second)
		err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendSent, ProviderID: "SM123", Now: at})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		e.flush()
		r := e.sendRow(p.SendID)
		if r.SendStatus != otp.SendSent || r.ProviderMessageID != "SM123" || !r.Updated.Equal(at) || !r.Time.Equal(base()) {
			t.Errorf("got %+v, want sent with SM123 updated at %v", r, at)
		}
	})

	t.Run("FailedKeepsErrorAndVerification", func(t *testing.T) {
		e := newEnv(t, newStore)
		p := params("+819012345678", "111111", base())
		st := e.send(p)
		err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Error: "timeout", Now: base()})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		e.flush()
		if r := e.sendRow(p.SendID); r.SendStatus != otp.SendFailed || r.Error != "timeout" || r.Status != history.StatusFailed {
			t.Errorf("got %+v, want failed with its error", r)
		}
		if v := e.verification(st.Verification.ID); v.Status != otp.StatusPending || v.Sends != 1 {
			t.Errorf("got status %s sends %d, want pending with 1 send (delivery unknown is not undone)", v.Status, v.Sends)
		}
	})

	t.Run("UndoOfCreatingSendCancelsVerification", func(t *testing.T) {
		e := newEnv(t, newStore)
		p := params("+819012345678", "111111", base())
		st := e.send(p)
		at := base().Add(time.Second)
		err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Undo: true, Created: true, Now: at})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		v := e.verification(st.Verification.ID)
		if v.Status != otp.StatusCanceled || !v.ClosedAt.Equal(at) || v.Sends != 0 {
			t.Errorf("got status %s closed %v sends %d, want canceled at %v with 0 sends", v.Status, v.ClosedAt, v.Sends, at)
		}
		if next := e.send(params("+819012345678", "222222", at)); !next.Created {
			t.Errorf("next send: got created=false, want a new verification after the canceled one")
		}
	})

	t.Run("UndoOfResendGivesTheSendBack", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.send(params("+819012345678", "111111", base()))
		p := params("+819012345678", "222222", base().Add(time.Minute))
		st := e.send(p)
		err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Undo: true, Now: base().Add(time.Minute)})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		if v := e.verification(st.Verification.ID); v.Status != otp.StatusPending || v.Sends != 1 {
			t.Errorf("got status %s sends %d, want pending with 1 send", v.Status, v.Sends)
		}
		for i := 1; i < maxSends; i++ { // the budget has room for the given-back send again
			e.send(params("+819012345678", "33333"+string(rune('0'+i)), base().Add(2*time.Minute)))
		}
	})

	t.Run("UndoOfCreatingSendJoinedByResendOnlyUncounts", func(t *testing.T) {
		e := newEnv(t, newStore)
		p := params("+819012345678", "111111", base())
		st := e.send(p)
		e.send(params("+819012345678", "222222", base().Add(time.Second)))
		err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Undo: true, Created: true, Now: base().Add(2 * time.Second)})
		if err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		if v := e.verification(st.Verification.ID); v.Status != otp.StatusPending || v.Sends != 1 {
			t.Errorf("got status %s sends %d, want pending with 1 send: the resend's code is out there", v.Status, v.Sends)
		}
	})

	t.Run("UnknownSendIsNotFoundOrDropped", func(t *testing.T) {
		e := newEnv(t, newStore)
		id := newID()
		// A store that queues outcomes cannot tell at once; it drops the outcome instead.
		if err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: id, Status: otp.SendSent, Now: base()}); err != nil {
			wantNotFound(t, "FinishSend("+id+")", err)
		}
		e.flush()
		_, err := e.History.Send(e.ctx, id)
		wantNotFound(t, "the unknown send after FinishSend", err)
		err = e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: "not-a-uuid", Status: otp.SendSent, Now: base()})
		wantNotFound(t, "FinishSend(not-a-uuid)", err)
	})
}
