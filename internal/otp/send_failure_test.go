package otp_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestSendProviderFailure(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(*fakeSender)
		definite bool
		wantErr  error // also wrapped by the *otp.ErrProvider
	}{
		{"DefiniteProviderFailureRefunds", func(s *fakeSender) { s.Err = fmt.Errorf("provider refused: 400: %w", otp.ErrNotDelivered) }, true, otp.ErrNotDelivered},
		{"TimeoutIsNotRefunded", func(s *fakeSender) { s.Hang = true }, false, context.DeadlineExceeded},
		{"UnknownFailureIsNotRefunded", func(s *fakeSender) { s.Err = errors.New("provider answered 503") }, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *otp.Config) { c.SMSTimeout = 10 * time.Millisecond })
			tt.fail(e.sender)
			res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP})
			var provider *otp.ErrProvider
			if !errors.As(err, &provider) || provider.Definite != tt.definite || provider.Provider != "fake" {
				t.Fatalf("got %v, want *otp.ErrProvider from fake with definite %v", err, tt.definite)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("got %v, want it to wrap %v", err, tt.wantErr)
			}
			given := e.limiter.Given()
			if len(given) != 1 || !reflect.DeepEqual(res.Decision, given[0]) {
				t.Fatalf("result decision: got %+v, want the limiter's %+v", res.Decision, given)
			}
			var wantRefunds []rate.Reservation
			if tt.definite {
				wantRefunds = []rate.Reservation{given[0].Reservation}
			}
			if got := e.limiter.Refunds(); !reflect.DeepEqual(got, wantRefunds) {
				t.Errorf("refunds: got %+v, want %+v", got, wantRefunds)
			}
			msgs := e.sender.Messages()
			if len(msgs) != 1 {
				t.Fatalf("got %d messages handed to the sender, want 1", len(msgs))
			}
			row := e.sendRow(t, msgs[0].ID)
			if row.SendStatus != otp.SendFailed || row.Error == "" || !strings.Contains(err.Error(), row.Error) {
				t.Errorf("got row %+v, want failed with the provider's error", row)
			}

			// A definite failure never reached the user, so its verification is canceled and
			// the next send starts a new one; otherwise the code may arrive and stays valid.
			wantStatus, wantSends := otp.StatusPending, 1
			if tt.definite {
				wantStatus, wantSends = otp.StatusCanceled, 0
			}
			if v := e.verification(t, row.VerificationID); v.Status != wantStatus || v.Sends != wantSends {
				t.Errorf("verification: got %s sends=%d, want %s sends=%d", v.Status, v.Sends, wantStatus, wantSends)
			}
			e.sender.Err, e.sender.Hang = nil, false
			next := e.send(t)
			if next.Created != tt.definite || (next.Verification.ID == row.VerificationID) == tt.definite {
				t.Errorf("next send: got created %v id %s, want created %v (failed one was %s)",
					next.Created, next.Verification.ID, tt.definite, row.VerificationID)
			}
		})
	}
}

func TestSendDefiniteFailureOfAResendKeepsTheVerification(t *testing.T) {
	e := newEnv(t)
	first := e.send(t)
	e.sender.Err = fmt.Errorf("provider refused: %w", otp.ErrNotDelivered)
	if _, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP}); err == nil {
		t.Fatal("resend: got no error, want *otp.ErrProvider")
	}
	if got, want := e.limiter.Refunds(), []rate.Reservation{e.limiter.Given()[1].Reservation}; !reflect.DeepEqual(got, want) {
		t.Errorf("refunds: got %+v, want the resend's %+v", got, want)
	}
	if v := e.verification(t, first.Verification.ID); v.Status != otp.StatusPending || v.Sends != 1 {
		t.Errorf("verification: got %s sends=%d, want pending sends=1 (the failed resend not counted)", v.Status, v.Sends)
	}
	e.sender.Err = nil
	if next := e.send(t); next.Created || next.Verification.ID != first.Verification.ID || next.SendsLeft != 3 {
		t.Errorf("next send: got created %v id %s left=%d, want a resend of %s with 3 left",
			next.Created, next.Verification.ID, next.SendsLeft, first.Verification.ID)
	}
	if _, err := e.check(codes[0]); err != nil {
		t.Errorf("first code: got %v, want approved", err)
	}
}

func TestSendRefundFailureIsOnlyLogged(t *testing.T) {
	e := newEnv(t)
	e.limiter.RefundErr = errUnavailable
	e.sender.Err = fmt.Errorf("provider refused: %w", otp.ErrNotDelivered)
	_, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP})
	var provider *otp.ErrProvider
	if !errors.As(err, &provider) || errors.Is(err, otp.ErrUnavailable) {
		t.Errorf("got %v, want the provider's failure, not the refund's", err)
	}
	if got := len(e.limiter.Refunds()); got != 1 {
		t.Errorf("refunds: got %d, want 1 attempted", got)
	}
}

func TestSendBudgetSpent(t *testing.T) {
	e := newEnv(t, func(c *otp.Config) { c.MaxSends, c.PhoneRules, c.DuplicateWindow = 1, nil, 0 })
	t0 := e.clock.Now()
	e.send(t)
	e.clock.Set(t0.Add(time.Minute))

	res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP})
	var limited *otp.ErrRateLimited
	if !errors.As(err, &limited) {
		t.Fatalf("second send: got %v, want *otp.ErrRateLimited", err)
	}
	t.Run("RefusalNamesTheVerificationBudget", func(t *testing.T) {
		v := limited.Violations()
		if len(v) != 1 || v[0].Scope != otp.ScopeVerification || v[0].Rule != (rate.Rule{Limit: 1, Window: 5 * time.Minute}) {
			t.Fatalf("violations: got %+v, want the verification rule 1/5m alone", v)
		}
		// The budget frees up when the verification, sent a minute ago, expires.
		if got, want := limited.RetryAfter(), 4*time.Minute; got != want || v[0].ResetAfter != want {
			t.Errorf("retry after: got %v (reset %v), want %v", got, v[0].ResetAfter, want)
		}
	})
	t.Run("ResultCarriesTheRefusingDecision", func(t *testing.T) {
		if !reflect.DeepEqual(res.Decision, limited.Decision) {
			t.Errorf("result decision: got %+v, want the refusal's %+v", res.Decision, limited.Decision)
		}
		if res.Decision.Allowed || !reflect.DeepEqual(res.Decision.Reservation, rate.Reservation{}) {
			t.Errorf("decision: got allowed %v reservation %+v, want refused without one", res.Decision.Allowed, res.Decision.Reservation)
		}
		var scopes []string
		for _, r := range res.Decision.Rules {
			scopes = append(scopes, r.Scope)
		}
		if want := []string{otp.ScopeIP, otp.ScopeVerification}; !reflect.DeepEqual(scopes, want) {
			t.Errorf("decision scopes: got %v, want %v", scopes, want)
		}
		if closest, ok := res.Decision.Closest(); !ok || closest.Scope != otp.ScopeVerification || closest.Remaining != 0 {
			t.Errorf("closest rule: got %+v, want the spent verification budget", closest)
		}
	})
	t.Run("ReservationIsRefunded", func(t *testing.T) {
		given := e.limiter.Given()
		if got, want := e.limiter.Refunds(), []rate.Reservation{given[1].Reservation}; !reflect.DeepEqual(got, want) {
			t.Errorf("refunds: got %+v, want the refused send's %+v", got, want)
		}
	})
	t.Run("NothingIsSent", func(t *testing.T) {
		if got := len(e.sender.Messages()); got != 1 {
			t.Errorf("got %d messages, want the first send's alone", got)
		}
	})
}

func TestSendStoreFailsAfterTheLimiterAdmitted(t *testing.T) {
	e := newEnv(t)
	e.store.BeginSendErr = errUnavailable
	res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP})
	if !errors.Is(err, otp.ErrUnavailable) {
		t.Fatalf("got %v, want it to wrap otp.ErrUnavailable", err)
	}
	given := e.limiter.Given()
	if len(given) != 1 || !reflect.DeepEqual(res.Decision, given[0]) {
		t.Errorf("result decision: got %+v, want the limiter's %+v", res.Decision, given)
	}
	if got, want := e.limiter.Refunds(), []rate.Reservation{given[0].Reservation}; !reflect.DeepEqual(got, want) {
		t.Errorf("refunds: got %+v, want %+v", got, want)
	}
	if got := len(e.sender.Messages()); got != 0 || e.store.Calls("FinishSend") != 0 {
		t.Errorf("got %d messages, %d finished, want nothing sent", got, e.store.Calls("FinishSend"))
	}
}

func TestSendCodeDrawFailsBeforeTheLimiter(t *testing.T) {
	e := newEnv(t)
	e.svc.Rand = codeReader() // exhausted at once
	if _, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP}); err == nil {
		t.Fatal("got no error, want the draw's")
	}
	// The code is drawn and the message rendered before the limiter decides (its segments
	// are what budgets reserve): a failed draw spends nothing, so nothing is refunded.
	if got, refunds := len(e.limiter.Given()), len(e.limiter.Refunds()); got != 0 || refunds != 0 {
		t.Errorf("got %d decisions and %d refunds, want none", got, refunds)
	}
	if e.store.Calls("BeginSend") != 0 || len(e.sender.Messages()) != 0 {
		t.Errorf("got %d begun, %d sent, want nothing", e.store.Calls("BeginSend"), len(e.sender.Messages()))
	}
}

func TestSendFinishFailureIsNotTheClientsError(t *testing.T) {
	e := newEnv(t)
	e.store.FinishSendErr = errUnavailable
	res := e.send(t)
	if !res.Created || len(e.sender.Messages()) != 1 || e.store.Calls("FinishSend") != 1 {
		t.Errorf("got created %v, %d sent, %d finished, want a created, sent verification", res.Created, len(e.sender.Messages()), e.store.Calls("FinishSend"))
	}
	if got := len(e.limiter.Refunds()); got != 0 {
		t.Errorf("refunds: got %d, want none: the SMS went out", got)
	}
	if _, err := e.check(codes[0]); err != nil {
		t.Errorf("check: got %v, want the sent code approved", err)
	}
}

func TestSendClientHangingUpAfterAdmissionStillSends(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.store.AfterBeginSend = cancel
	if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP}); err != nil {
		t.Fatalf("got %v, want the accepted send to finish", err)
	}
	msgs := e.sender.Messages()
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	if r := e.sendRow(t, msgs[0].ID); r.SendStatus != otp.SendSent {
		t.Errorf("row: got %s, want sent", r.SendStatus)
	}
}
