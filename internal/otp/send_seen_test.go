package otp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"otpgate/internal/otp"
)

// sendOn sends to testPhone from testIP through svc and fails the test on an error.
func sendOn(t *testing.T, svc *otp.Service) otp.SendResult {
	t.Helper()
	res, err := svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP})
	if err != nil {
		t.Fatalf("send: got %v, want none", err)
	}
	return res
}

// wantSeen fails t unless the latest BeginSend named the verification id as seen (none
// when id is "").
func (e *env) wantSeen(t *testing.T, step, id string) {
	t.Helper()
	got := e.store.SeenAtBegin()
	switch {
	case id == "" && got != nil:
		t.Errorf("%s: BeginSend got seen %s, want none", step, got.ID)
	case id != "" && (got == nil || got.ID != id || got.Status != otp.StatusPending):
		t.Errorf("%s: BeginSend got seen %+v, want pending %s", step, got, id)
	}
}

func TestSendNamesTheRememberedPendingVerification(t *testing.T) {
	e := newEnv(t)
	first := sendOn(t, e.svc)
	e.wantSeen(t, "first send", "")
	id := first.Verification.ID
	if again := sendOn(t, e.svc); again.Created || again.Verification.ID != id {
		t.Fatalf("resend: got %+v, want a resend of %s", again, id)
	}
	e.wantSeen(t, "resend on the sending instance", id)

	other := e.otherInstance(t)
	if res := sendOn(t, other); res.Created || res.Verification.ID != id || res.Verification.Sends != 3 {
		t.Fatalf("resend on another instance: got %+v, want the third send of %s", res, id)
	}
	e.wantSeen(t, "resend on another instance", "")
	sendOn(t, other)
	e.wantSeen(t, "its next resend", id)
	if got := e.store.Calls("Verification"); got != 0 {
		t.Errorf("got %d store reads, want none: a send reads nothing before its one call", got)
	}
}

func TestSendDecidesAStaleRememberedVerificationOnTheStoredRow(t *testing.T) {
	t.Run("ClosedElsewhere", func(t *testing.T) {
		e := newEnv(t)
		old := e.send(t).Verification
		if _, err := e.otherInstance(t).Check(context.Background(), otp.CheckInput{Phone: testPhone, Code: codes[0], ClientIP: testIP}); err != nil {
			t.Fatalf("check on another instance: got %v, want approved", err)
		}
		res := e.send(t)
		e.wantSeen(t, "send after the approval elsewhere", old.ID)
		if !res.Created || res.Verification.ID == old.ID || res.Verification.Sends != 1 {
			t.Fatalf("got %+v, want a new verification: the remembered one was approved", res)
		}
		if got := e.verification(t, old.ID); got.Status != otp.StatusApproved || got.Sends != 1 {
			t.Errorf("old verification: got %s with %d sends, want approved with 1", got.Status, got.Sends)
		}
		e.send(t)
		e.wantSeen(t, "next send", res.Verification.ID)
		if _, err := e.check(codes[1]); err != nil {
			t.Errorf("check of the code sent on the new verification: got %v, want approved", err)
		}
	})

	t.Run("ExpiredAndReplaced", func(t *testing.T) {
		e := newEnv(t)
		t0 := e.clock.Now()
		old := e.send(t).Verification
		e.clock.Set(t0.Add(6 * time.Minute))
		replacement := sendOn(t, e.otherInstance(t))
		if !replacement.Created {
			t.Fatalf("send on another instance after expiry: got %+v, want a new verification", replacement)
		}
		e.clock.Set(t0.Add(7 * time.Minute))
		res := e.send(t)
		e.wantSeen(t, "send after the replacement elsewhere", old.ID)
		if res.Created || res.Verification.ID != replacement.Verification.ID || res.Verification.Sends != 2 {
			t.Fatalf("got %+v, want the second send of the replacement %s", res, replacement.Verification.ID)
		}
		if got := e.verification(t, old.ID); got.Status != otp.StatusExpired || got.Sends != 1 {
			t.Errorf("old verification: got %s with %d sends, want expired with 1", got.Status, got.Sends)
		}
		if _, err := e.check(codes[2]); err != nil {
			t.Errorf("check of the code sent on the replacement: got %v, want approved", err)
		}
	})
}

func TestSendNamesNothingItCannotVouchFor(t *testing.T) {
	t.Run("AfterItsOwnApproval", func(t *testing.T) {
		e := newEnv(t)
		e.send(t)
		if _, err := e.check(codes[0]); err != nil {
			t.Fatalf("check: got %v, want approved", err)
		}
		if res := e.send(t); !res.Created {
			t.Errorf("got %+v, want a new verification", res)
		}
		e.wantSeen(t, "send after the approval", "")
	})

	t.Run("AfterAFailedBegin", func(t *testing.T) {
		e := newEnv(t)
		id := e.send(t).Verification.ID
		e.store.BeginSendErr = errUnavailable
		if _, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP}); !errors.Is(err, otp.ErrUnavailable) {
			t.Fatalf("got %v, want unavailable", err)
		}
		e.wantSeen(t, "failed send", id)
		e.store.BeginSendErr = nil
		e.send(t)
		e.wantSeen(t, "send after the failure", "")
		e.send(t)
		e.wantSeen(t, "the send after that", id)
	})
}
