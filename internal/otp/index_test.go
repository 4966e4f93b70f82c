package otp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// TestLimiterKeysHoldNoAddress sends and checks by phone and by email, for the default app
// and for an app with rules of its own and a keyed rate limit valued by the number, with
// an AddressIndex set: no key the limiter is given holds the address, its digits or its
// local part, and the per-address keys hold its index.
func TestLimiterKeysHoldNoAddress(t *testing.T) {
	index := func(a string) string { return "h1.idx" + string(rune('A'+len(a)%26)) }
	e := newEnv(t, func(c *otp.Config) {
		c.AddressIndex = index
		c.EmailRules = []rate.Rule{{Limit: 2, Window: time.Hour}}
		c.CheckEmailRules = []rate.Rule{{Limit: 7, Window: time.Hour}}
		c.GlobalRules = []rate.Rule{{Limit: 1000, Window: time.Hour}}
	})
	ctx := context.Background()
	app := e.cfg.DefaultApp()
	app.ID, app.Default = "0190a000-0000-7000-8000-00000000a001", false
	app.SendRules = []rate.Rule{{Limit: 5, Window: time.Hour}}
	app.CheckRules = []rate.Rule{{Limit: 5, Window: time.Hour}}
	keyed := []rate.KeyedLimit{{ID: "RK1", Name: "end_user_phone", Value: testPhone, Rules: []rate.Rule{{Limit: 9, Window: time.Hour}}}}
	const email = "ana@example.com"
	if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP, Fingerprint: "ua"}); err != nil {
		t.Fatal(err)
	}
	_, _ = e.check(codes[0])
	if _, err := e.svc.Send(ctx, otp.SendInput{Email: email, ClientIP: testIP, Fingerprint: "ua"}); err != nil {
		t.Fatal(err)
	}
	_, _ = e.svc.Check(ctx, otp.CheckInput{Email: email, Code: "000000", ClientIP: testIP})
	if _, err := e.svc.Send(ctx, otp.SendInput{App: &app, Phone: testPhone, ClientIP: testIP, Fingerprint: "ua", RateLimits: keyed}); err != nil {
		t.Fatal(err)
	}
	_, _ = e.svc.Check(ctx, otp.CheckInput{App: &app, Phone: testPhone, Code: "000000", ClientIP: testIP})
	scopes := map[string]bool{}
	for _, call := range e.limiter.Allows() {
		for _, l := range call {
			scopes[l.Scope] = true
			for _, plain := range []string{testPhone[1:], "ana@", email} {
				if strings.Contains(l.Key, plain) {
					t.Errorf("scope %s: key %q holds %q", l.Scope, l.Key, plain)
				}
			}
			switch l.Scope {
			case otp.ScopePhone, otp.ScopeEmail, otp.ScopeCheckPhone, otp.ScopeCheckEmail, otp.ScopeApp, otp.ScopeAppCheck, rate.ScopeRateLimit:
				if !strings.Contains(l.Key, "h1.idx") {
					t.Errorf("scope %s: key %q, want the address's index in it", l.Scope, l.Key)
				}
			}
		}
	}
	for _, s := range []string{otp.ScopePhone, otp.ScopeEmail, otp.ScopeCheckPhone, otp.ScopeCheckEmail, otp.ScopeApp, otp.ScopeAppCheck, rate.ScopeRateLimit, otp.ScopeDuplicate} {
		if !scopes[s] {
			t.Errorf("no limit of scope %s was asked for: the test does not cover it", s)
		}
	}
}
