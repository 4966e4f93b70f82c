package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testSettle(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("SendLeftSendingBecomesUnknown", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Settling)
		left := fixture.Params("+819012345678", "111111", fixture.Base())
		v := e.Send(left).Verification
		finished := fixture.Params("+819087654321", "222222", fixture.Base().Add(time.Second))
		w := e.Send(finished).Verification
		e.Finish(otp.FinishSend{SendID: finished.SendID, VerificationID: w.ID, Status: otp.SendSent, Now: fixture.Base().Add(2 * time.Second)})
		young := fixture.Params("+819011112222", "333333", fixture.Base().Add(time.Minute))
		e.Send(young)

		at := fixture.Base().Add(2 * time.Minute)
		if n := e.Settle(fixture.Base().Add(30*time.Second), at, 100); n != 1 {
			t.Fatalf("got %d settled, want 1: only the old send still sending", n)
		}
		r := e.SendRow(left.SendID)
		if r.SendStatus != otp.SendUnknown || r.Status != history.StatusUnknown || r.Error != otp.UnknownOutcome || !r.Updated.Equal(at) {
			t.Errorf("got %+v, want unknown with its error, updated at %v", r, at)
		}
		if got := e.Verification(v.ID); got.Status != otp.StatusPending || got.Sends != 1 {
			t.Errorf("got verification %s with %d sends, want it pending with 1: its code may have arrived", got.Status, got.Sends)
		}
		if r := e.SendRow(finished.SendID); r.SendStatus != otp.SendSent {
			t.Errorf("finished send: got %s, want sent", r.SendStatus)
		}
		if r := e.SendRow(young.SendID); r.SendStatus != otp.SendSending {
			t.Errorf("young send: got %s, want sending", r.SendStatus)
		}
		if n := e.Settle(fixture.Base().Add(30*time.Second), at, 100); n != 0 {
			t.Errorf("second pass: got %d settled, want 0", n)
		}
	})

	t.Run("OldestFirstAtMostLimit", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Settling)
		var sends []otp.BeginSend
		for i := range 3 {
			p := fixture.Params("+81901234567"+string(rune('0'+i)), "111111", fixture.Base().Add(time.Duration(i)*time.Second))
			e.Send(p)
			sends = append(sends, p)
		}
		if n := e.Settle(fixture.Base().Add(time.Minute), fixture.Base().Add(time.Minute), 2); n != 2 {
			t.Fatalf("got %d settled, want 2", n)
		}
		for i, want := range []otp.SendStatus{otp.SendUnknown, otp.SendUnknown, otp.SendSending} {
			if got := e.SendRow(sends[i].SendID).SendStatus; got != want {
				t.Errorf("send %d: got %s, want %s", i, got, want)
			}
		}
	})

	t.Run("LateOutcomeWins", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Settling)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		v := e.Send(p).Verification
		e.Settle(fixture.Base().Add(time.Minute), fixture.Base().Add(time.Minute), 100)
		e.Finish(otp.FinishSend{SendID: p.SendID, VerificationID: v.ID, Status: otp.SendSent, ProviderID: "SM1", Now: fixture.Base().Add(2 * time.Minute)})
		if r := e.SendRow(p.SendID); r.SendStatus != otp.SendSent || r.ProviderMessageID != "SM1" {
			t.Errorf("got %s %q, want sent SM1: the provider's answer is better than unknown", r.SendStatus, r.ProviderMessageID)
		}
	})
}
