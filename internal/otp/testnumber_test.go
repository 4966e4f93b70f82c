package otp_test

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestTestNumbers(t *testing.T) {
	ctx := context.Background()
	appWith := func(e *env, expires time.Time) *otp.App {
		app := e.cfg.DefaultApp()
		app.TestNumbers = map[string]otp.TestNumber{
			testPhone:        {ID: "tn-phone", Address: testPhone, Code: "424242", ExpiresAt: expires},
			"qa@example.com": {ID: "tn-email", Address: "qa@example.com", Code: "131313", ExpiresAt: expires},
			"+442079460000":  {ID: "tn-other", Address: "+442079460000", Code: "000000", ExpiresAt: expires},
		}
		return &app
	}

	t.Run("ASendGoesNowhereAndMeetsOnlyItsOwnRule", func(t *testing.T) {
		e, f, _ := fraudEnv(t)
		f.Verdict = otp.Screening{Blocked: "prefix +8190123"} // the block list would refuse the number
		app := appWith(e, e.clock.Now().Add(time.Hour))
		res, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: testPhone, ClientIP: testIP})
		if err != nil || !res.Created {
			t.Fatalf("got %+v, %v; want a new verification", res, err)
		}
		if got := e.sender.Messages(); len(got) != 0 {
			t.Errorf("sent %v, want nothing", got)
		}
		if len(f.screened) != 0 {
			t.Errorf("the fraud step screened %+v, want nothing asked", f.screened)
		}
		allows := e.limiter.Allows()
		if len(allows) != 1 || len(allows[0]) != 1 || allows[0][0].Scope != otp.ScopeTestNumber || allows[0][0].Key != "tn-phone" ||
			allows[0][0].Rules[0] != otp.TestNumberRule {
			t.Errorf("policy: got %+v, want the test number's own rule only", allows)
		}
		d, err := e.store.VerificationDetail(ctx, res.Verification.ID)
		if err != nil || len(d.Sends) != 1 || !d.Sends[0].Test || d.Sends[0].Provider != otp.ProviderTest {
			t.Fatalf("history: got %+v, %v; want one send marked test", d.Sends, err)
		}
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "123456", ClientIP: testIP}); otp.ErrorCode(err) != otp.CodeInvalidCode {
			t.Errorf("a drawn code: got %v, want invalid_code", err)
		}
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "424242", ClientIP: testIP}); err != nil {
			t.Errorf("the fixed code: got %v, want approved", err)
		}
		if len(f.approved) != 0 {
			t.Errorf("approvals counted for the guard: %+v, want none", f.approved)
		}
	})

	t.Run("AnEmailTestAddressWorksAlike", func(t *testing.T) {
		e := newEnv(t)
		app := appWith(e, e.clock.Now().Add(time.Hour))
		res, err := e.svc.Send(ctx, otp.SendInput{App: app, Email: "qa@Example.COM", ClientIP: testIP})
		if err != nil || len(e.sender.Messages()) != 0 {
			t.Fatalf("got %+v, %v, %d messages; want a verification and no message", res, err, len(e.sender.Messages()))
		}
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Email: "qa@example.com", Code: "131313", ClientIP: testIP}); err != nil {
			t.Errorf("the fixed code: got %v, want approved", err)
		}
	})

	t.Run("ItsRuleRefusesAndIsRecorded", func(t *testing.T) {
		e := newEnv(t)
		e.limiter.Deny = []rate.RuleState{{Scope: otp.ScopeTestNumber, Key: "tn-phone", Rule: otp.TestNumberRule, Used: 30, Violated: true}}
		_, err := e.svc.Send(ctx, otp.SendInput{App: appWith(e, e.clock.Now().Add(time.Hour)), Phone: testPhone, ClientIP: testIP})
		if otp.ErrorCode(err) != otp.CodeRateLimited {
			t.Fatalf("got %v, want rate_limited", err)
		}
		if got := e.denied.Got(); len(got) != 1 || got[0].Reason != "test_number 30/1h" {
			t.Errorf("history: got %+v, want the test number's rule", got)
		}
	})

	t.Run("AfterItsExpiryTheNumberIsOrdinary", func(t *testing.T) {
		e := newEnv(t)
		app := appWith(e, e.clock.Now())
		res, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: testPhone, ClientIP: testIP})
		if err != nil || len(e.sender.Messages()) != 1 {
			t.Fatalf("got %+v, %v, %d messages; want an ordinary send", res, err, len(e.sender.Messages()))
		}
		if got := e.sendRow(t, e.sender.Messages()[0].ID); got.Test {
			t.Errorf("history: got %+v, want an ordinary send", got)
		}
		if _, err := e.svc.Check(ctx, otp.CheckInput{App: app, Phone: testPhone, Code: "424242", ClientIP: testIP}); otp.ErrorCode(err) != otp.CodeInvalidCode {
			t.Errorf("the fixed code after the expiry: got %v, want invalid_code", err)
		}
	})

	t.Run("ItSkipsTheCountryAndNumberTypeRules", func(t *testing.T) {
		e := newEnv(t, func(c *otp.Config) {
			c.AllowedCountries = contact.Countries{"GB"}
			c.DeniedNumberTypes = []string{"fixed_line"}
		})
		app := appWith(e, e.clock.Now().Add(time.Hour))
		app.AllowedCountries = []string{"JP"}
		if _, err := e.svc.Send(ctx, otp.SendInput{App: app, Phone: "+442079460000", ClientIP: testIP}); err != nil {
			t.Errorf("a test number outside the app's countries, of a denied type: got %v, want it sent nowhere", err)
		}
	})
}
