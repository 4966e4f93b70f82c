package otp_test

import (
	"context"
	"errors"
	"testing"

	"otpgate/internal/challenge"
	"otpgate/internal/otp"
	"otpgate/internal/proof"
	"otpgate/internal/rate"
)

func TestSendBindsASolutionToItsApp(t *testing.T) {
	ctx := context.Background()
	e, _, gl := fraudEnv(t)
	e.svc.UseChallenger(challenge.New(challenge.Options{Secret: []byte("0123456789abcdef0123456789abcdef"), Complexity: 1000}))
	gl.Guards = []rate.GuardState{{Scope: rate.ScopePrefix, Key: "+8190123", Challenged: true, Challenge: 1, Signal: rate.SignalVolume}}
	_, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP})
	var required *otp.ErrChallengeRequired
	if !errors.As(err, &required) {
		t.Fatalf("got %v, want a challenge asked through the default app", err)
	}
	solution, ok := challenge.Solve(required.Challenge)
	if !ok {
		t.Fatalf("cannot solve %+v", required.Challenge)
	}
	gl.Guards = nil

	key := tenant(keyAppID, otp.AccessKey)
	_, err = e.svc.Send(ctx, otp.SendInput{App: &key, Phone: testPhone, ClientIP: testIP, Solution: proof.Solution{Altcha: solution}})
	var invalid *proof.ErrChallengeInvalid
	if !errors.As(err, &invalid) {
		t.Errorf("the default app's solution through a key app: got %v, want *proof.ErrChallengeInvalid", err)
	}
	if got := len(e.sender.Messages()); got != 0 {
		t.Fatalf("got %d messages, want none before the solution is used where it was asked", got)
	}
	if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP, Solution: proof.Solution{Altcha: solution}}); err != nil {
		t.Errorf("the solution through its own app: got %v, want the code sent", err)
	}
	if got := len(e.sender.Messages()); got != 1 {
		t.Errorf("got %d messages, want the code sent once", got)
	}
}
