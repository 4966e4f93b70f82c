package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

func testSettle(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("SendLeftSendingBecomesUnknown", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Settling)
		left := params("+819012345678", "111111", base())
		v := e.send(left).Verification
		finished := params("+819087654321", "222222", base().Add(time.Second))
		w := e.send(finished).Verification
		e.finish(otp.FinishSend{SendID: finished.SendID, VerificationID: w.ID, Status: otp.SendSent, Now: base().Add(2 * time.Second)})
		young := params("+819011112222", "333333", base().Add(time.Minute))
		e.send(young)

		at := base().Add(2 * time.Minute)
		if n := e.settle(base().Add(30*time.Second), at, 100); n != 1 {
			t.Fatalf("got %d settled, want 1: only the old send still sending", n)
		}
		r := e.sendRow(left.SendID)
		if r.SendStatus != otp.SendUnknown || r.Status != history.StatusUnknown || r.Error != otp.UnknownOutcome || !r.Updated.Equal(at) {
			t.Errorf("got %+v, want unknown with its error, updated at %v", r, at)
		}
		if got := e.verification(v.ID); got.Status != otp.StatusPending || got.Sends != 1 {
			t.Errorf("got verification %s with %d sends, want it pending with 1: its code may have arrived", got.Status, got.Sends)
		}
		if r := e.sendRow(finished.SendID); r.SendStatus != otp.SendSent {
			t.Errorf("finished send: got %s, want sent", r.SendStatus)
		}
		if r := e.sendRow(young.SendID); r.SendStatus != otp.SendSending {
			t.Errorf("young send: got %s, want sending", r.SendStatus)
		}
		if n := e.settle(base().Add(30*time.Second), at, 100); n != 0 {
			t.Errorf("second pass: got %d settled, want 0", n)
		}
	})

	t.Run("OldestFirstAtMostLimit", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Settling)
		var sends []otp.BeginSend
		for i := range 3 {
			p := params("+81901234567"+string(rune('0'+i)), "111111", base().Add(time.Duration(i)*time.Second))
			e.send(p)
			sends = append(sends, p)
		}
		if n := e.settle(base().Add(time.Minute), base().Add(time.Minute), 2); n != 2 {
			t.Fatalf("got %d settled, want 2", n)
		}
		for i, want := range []otp.SendStatus{otp.SendUnknown, otp.SendUnknown, otp.SendSending} {
			if got := e.sendRow(sends[i].SendID).SendStatus; got != want {
				t.Errorf("send %d: got %s, want %s", i, got, want)
			}
		}
	})

	t.Run("LateOutcomeWins", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Settling)
		p := params("+819012345678", "111111", base())
		v := e.send(p).Verification
		e.settle(base().Add(time.Minute), base().Add(time.Minute), 100)
		e.finish(otp.FinishSend{SendID: p.SendID, VerificationID: v.ID, Status: otp.SendSent, ProviderID: "SM1", Now: base().Add(2 * time.Minute)})
		if r := e.sendRow(p.SendID); r.SendStatus != otp.SendSent || r.ProviderMessageID != "SM1" {
			t.Errorf("got %s %q, want sent SM1: the provider's answer is better than unknown", r.SendStatus, r.ProviderMessageID)
		}
	})
}

// settle runs Settle and fails the test on error.
func (e *env) settle(before, now time.Time, limit int) int {
	e.t.Helper()
	n, err := e.settler().SettleSends(e.ctx, before, now, limit)
	if err != nil {
		e.t.Fatalf("Settle: %v", err)
	}
	return n
}

// finish records an outcome and waits until it is written.
func (e *env) finish(p otp.FinishSend) {
	e.t.Helper()
	if err := e.Store.FinishSend(e.ctx, p); err != nil {
		e.t.Fatalf("FinishSend: %v", err)
	}
	e.flush()
}
