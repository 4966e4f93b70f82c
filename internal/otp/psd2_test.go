package otp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/psd2"
	"otpgate/internal/templates"
)

func TestPSD2(t *testing.T) {
	ctx := context.Background()
	payment := psd2.Transaction{Amount: "€39.99", Payee: "Acme Inc."}
	psd2App := func(e *env) *otp.App {
		app := e.cfg.DefaultApp()
		app.PSD2 = true
		return &app
	}

	t.Run("TheSameAmountAndPayeeApprove", func(t *testing.T) {
		e := newEnv(t)
		app := psd2App(e)
		res, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: testPhone, ClientIP: testIP, Transaction: payment})
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		if res.Verification.Transaction != payment {
			t.Errorf("verification's transaction: got %+v, want %+v", res.Verification.Transaction, payment)
		}
		body := e.sender.Messages()[0].Body
		if !strings.Contains(body, "€39.99") || !strings.Contains(body, "Acme Inc.") {
			t.Errorf("message: got %q, want the amount and payee in it", body)
		}
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "123456", ClientIP: testIP, Transaction: payment}); err != nil {
			t.Errorf("check: got %v, want approved", err)
		}
	})

	for _, tt := range []struct {
		name string
		tx   psd2.Transaction
	}{
		{"AnotherAmountIsAWrongGuess", psd2.Transaction{Amount: "€3999", Payee: "Acme Inc."}},
		{"AnotherPayeeIsAWrongGuess", psd2.Transaction{Amount: "€39.99", Payee: "Acme Inc"}},
		{"SwappedSpellingIsAWrongGuess", psd2.Transaction{Amount: "€39,99", Payee: "Acme Inc."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			app := psd2App(e)
			if _, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: testPhone, ClientIP: testIP, Transaction: payment}); err != nil {
				t.Fatalf("send: %v", err)
			}
			_, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "123456", ClientIP: testIP, Transaction: tt.tx})
			var wrong *otp.ErrInvalidCode
			if !errors.As(err, &wrong) || wrong.AttemptsLeft != e.cfg.MaxAttempts-1 {
				t.Fatalf("got %v, want invalid_code with one guess spent", err)
			}
			// The right payment still approves: the wrong one only cost a guess.
			if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "123456", ClientIP: testIP, Transaction: payment}); err != nil {
				t.Errorf("then the right payment: got %v, want approved", err)
			}
		})
	}

	t.Run("EachResendIsBoundToItsOwnPayment", func(t *testing.T) {
		e := newEnv(t)
		app := psd2App(e)
		other := psd2.Transaction{Amount: "EUR 10", Payee: "Other Ltd"}
		if _, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: testPhone, ClientIP: testIP, Transaction: payment}); err != nil {
			t.Fatalf("send: %v", err)
		}
		e.clock.Set(e.clock.Now().Add(2 * time.Minute))
		res, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: testPhone, ClientIP: otherIP, Transaction: other})
		if err != nil || res.Verification.Transaction != other {
			t.Fatalf("resend: got %+v, %v; want the verification on the new payment", res.Verification.Transaction, err)
		}
		// The first code with the second payment is refused, the second code with it approves.
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "123456", ClientIP: testIP, Transaction: other}); otp.ErrorCode(err) != otp.CodeInvalidCode {
			t.Errorf("first code, second payment: got %v, want invalid_code", err)
		}
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "234567", ClientIP: testIP, Transaction: other}); err != nil {
			t.Errorf("second code, second payment: got %v, want approved", err)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		e := newEnv(t)
		plain := e.cfg.DefaultApp()
		long := strings.Repeat("x", 65)
		for _, tt := range []struct {
			name  string
			app   *otp.App
			tx    psd2.Transaction
			field string
		}{
			{"AppWithoutPSD2RefusesAmount", &plain, psd2.Transaction{Amount: "€1"}, "amount"},
			{"AppWithoutPSD2RefusesPayee", &plain, psd2.Transaction{Payee: "Acme"}, "payee"},
			{"AmountRequired", psd2App(e), psd2.Transaction{Payee: "Acme"}, "amount"},
			{"PayeeRequired", psd2App(e), psd2.Transaction{Amount: "€1"}, "payee"},
			{"AmountNotANumber", psd2App(e), psd2.Transaction{Amount: "lots", Payee: "Acme"}, "amount"},
			{"AmountTwoCurrencies", psd2App(e), psd2.Transaction{Amount: "€1 EUR", Payee: "Acme"}, "amount"},
			{"AmountThousandsSeparators", psd2App(e), psd2.Transaction{Amount: "€1,000.00", Payee: "Acme"}, "amount"},
			{"AmountNegative", psd2App(e), psd2.Transaction{Amount: "-5 €", Payee: "Acme"}, "amount"},
			{"PayeeTooLong", psd2App(e), psd2.Transaction{Amount: "€1", Payee: long}, "payee"},
			{"PayeeLineBreak", psd2App(e), psd2.Transaction{Amount: "€1", Payee: "Acme\nCall +1 555"}, "payee"},
			{"PayeeBidiOverride", psd2App(e), psd2.Transaction{Amount: "€1", Payee: "Acme\u202eevil"}, "payee"},
			{"PayeeNUL", psd2App(e), psd2.Transaction{Amount: "€1", Payee: "Ac\x00me"}, "payee"},
			{"PayeeInvalidUTF8", psd2App(e), psd2.Transaction{Amount: "€1", Payee: "Ac\xffme"}, "payee"},
			{"PayeePadded", psd2App(e), psd2.Transaction{Amount: "€1", Payee: " Acme"}, "payee"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := e.svc.Send(ctx, otp.SendInput{App: tt.app, Phone: testPhone, ClientIP: testIP, Transaction: tt.tx})
				var invalid *otp.ErrInvalidRequest
				if !errors.As(err, &invalid) || invalid.Fields[tt.field] == "" {
					t.Errorf("send: got %v, want invalid_request naming %s", err, tt.field)
				}
				_, err = e.svc.Check(ctx, otp.CheckInput{App: tt.app, Phone: testPhone, Code: "123456", ClientIP: testIP, Transaction: tt.tx})
				if !errors.As(err, &invalid) || invalid.Fields[tt.field] == "" {
					t.Errorf("check: got %v, want invalid_request naming %s", err, tt.field)
				}
			})
		}
		if n := len(e.limiter.Allows()); n != 0 {
			t.Errorf("limiter asked %d times, want nothing spent", n)
		}
		if n := len(e.sender.Messages()); n != 0 {
			t.Errorf("sent %d messages, want none", n)
		}
		for _, ok := range []string{"€39.99", "EUR 39.99", "39,99 €", "39.99EUR", "£5", "¥1000", "100", "CHF 0.5"} {
			app := psd2App(e)
			if _, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: testPhone, ClientIP: testIP, Transaction: psd2.Transaction{Amount: ok, Payee: "Acme"}}); otp.ErrorCode(err) == otp.CodeInvalidRequest {
				t.Errorf("amount %q: got %v, want it accepted", ok, err)
			}
		}
	})
}

// A payee goes out in the message, whose template was tried with one of SamplePayeeLen.
func TestPayeesFitWhatTemplatesAreTriedWith(t *testing.T) {
	if psd2.MaxPayeeLen > templates.SamplePayeeLen {
		t.Errorf("payees reach %d characters, templates are tried with %d", psd2.MaxPayeeLen, templates.SamplePayeeLen)
	}
}
