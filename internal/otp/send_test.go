package otp_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/ratelimit"
	"otpgate/internal/sms"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	testPhone = "+819012345678"
	testIP    = "192.0.2.1"
)

// newService builds a service on the real limiter over the shared Redis (a key prefix of
// its own), the in-memory store that dev mode runs, and the log sender.
func newService(t *testing.T, cfg otp.Config) (*otp.Service, *ratelimit.Limiter, *inmem.Store) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	limiter := ratelimit.New(rdb, prefix)
	mem := inmem.New()
	log := slog.New(slog.DiscardHandler)
	cfg.Secret = []byte("test secret of the send tests")
	cfg.CodeLength, cfg.CodeTTL, cfg.MaxAttempts = 6, 5*time.Minute, 5
	cfg.LimiterTimeout, cfg.StoreTimeout, cfg.SMSTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	return otp.NewService(cfg, mem, limiter, sms.NewLog(log), mem, log), limiter, mem
}

func TestSendBudgetSpent(t *testing.T) {
	ipRules := []otp.Rule{{Limit: 10, Window: time.Hour}}
	s, limiter, _ := newService(t, otp.Config{MaxSends: 1, IPRules: ipRules})
	ctx := context.Background()
	in := otp.SendInput{Phone: testPhone, ClientIP: testIP}
	if _, err := s.Send(ctx, in); err != nil {
		t.Fatalf("first send: got %v, want none", err)
	}

	res, err := s.Send(ctx, in)
	var limited *otp.ErrRateLimited
	if !errors.As(err, &limited) {
		t.Fatalf("second send: got %v, want *otp.ErrRateLimited", err)
	}
	t.Run("RefusalNamesTheVerificationBudget", func(t *testing.T) {
		v := limited.Violations()
		if len(v) != 1 || v[0].Scope != otp.ScopeVerification || v[0].Rule != (otp.Rule{Limit: 1, Window: 5 * time.Minute}) {
			t.Fatalf("violations: got %+v, want the verification rule 1/5m alone", v)
		}
		if got := limited.RetryAfter(); got <= 0 || got > 5*time.Minute || got != v[0].RetryAfter {
			t.Errorf("retry after: got %v, want the verification's remaining time, at most 5m", got)
		}
	})
	t.Run("ResultCarriesTheRefusingDecision", func(t *testing.T) {
		if !reflect.DeepEqual(res.Decision, limited.Decision) {
			t.Errorf("result decision: got %+v, want the refusal's %+v", res.Decision, limited.Decision)
		}
		if res.Decision.Allowed || len(res.Decision.Reservation.Keys) != 0 {
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
	t.Run("RefusalSpendsNoLimit", func(t *testing.T) {
		states, err := limiter.Inspect(ctx, otp.Limit{Scope: otp.ScopeIP, Key: testIP, Rules: ipRules})
		if err != nil {
			t.Fatal(err)
		}
		if len(states) != 1 || states[0].Used != 1 {
			t.Errorf("ip rule: got %+v, want 1 used (the refused send refunded)", states)
		}
	})
}

func TestSendDenied(t *testing.T) {
	s, _, mem := newService(t, otp.Config{
		MaxSends: 5, DuplicateWindow: 5 * time.Second, PhoneRules: []otp.Rule{{Limit: 1, Window: time.Minute}},
	})
	ctx := context.Background()
	in := otp.SendInput{Phone: testPhone, ClientIP: testIP, Fingerprint: "app/1.0"}
	if _, err := s.Send(ctx, in); err != nil {
		t.Fatalf("first send: got %v, want none", err)
	}

	t.Run("DoubleSubmitIsDuplicateThoughThePhoneRuleRefusesToo", func(t *testing.T) {
		res, err := s.Send(ctx, in)
		if !errors.Is(err, otp.ErrDuplicateSubmit) {
			t.Fatalf("got %v, want otp.ErrDuplicateSubmit", err)
		}
		if got := len(res.Decision.Violations()); got != 2 {
			t.Errorf("violations: got %v, want 2 (duplicate and phone)", got)
		}
		rows, _, err := mem.ListSends(ctx, otp.SendFilter{Phone: testPhone, Status: otp.HistoryDuplicate})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Reason != "duplicate 1/5s" {
			t.Errorf("history: got %+v, want one duplicate row with reason %q", rows, "duplicate 1/5s")
		}
	})
	t.Run("OtherClientIsRateLimitedByThePhoneRule", func(t *testing.T) {
		other := in
		other.Fingerprint = "app/2.0"
		_, err := s.Send(ctx, other)
		var limited *otp.ErrRateLimited
		if !errors.As(err, &limited) {
			t.Fatalf("got %v, want *otp.ErrRateLimited", err)
		}
		if v := limited.Violations(); len(v) != 1 || v[0].Scope != otp.ScopePhone {
			t.Errorf("violations: got %+v, want the phone rule alone", v)
		}
		rows, _, err := mem.ListSends(ctx, otp.SendFilter{Phone: testPhone, Status: otp.HistoryBlocked})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Reason != "phone 1/1m" {
			t.Errorf("history: got %+v, want one blocked row with reason %q", rows, "phone 1/1m")
		}
	})
}
