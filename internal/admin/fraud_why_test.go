package admin

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// tripWhy is a recent trip's explanation as the domain makes it.
func tripWhy(scope, key string, action string) rate.FraudExplanation {
	return rate.FraudExplanation{Signal: rate.SignalRecent, Scope: scope, Key: key, Action: action, Level: 3,
		Figures: rate.FraudFigures{RecentSends: 12, RecentUnapproved: 12, BaselineConversion: 0.6, LongSends: 12,
			LongUnapproved: 12, LongBaseline: 0.6, Ratio: 0.3, Threshold: 0.18, Floor: 10}}
}

func TestAdminFraudWhy(t *testing.T) {
	e := newFraudEnv(t)
	ctx := context.Background()
	now := time.Now().UTC()
	why := tripWhy(rate.ScopePrefix, "+81901234", rate.FraudTripped)
	gs := rate.GuardState{Scope: rate.ScopePrefix, Key: "+81901234", Blocked: true, Tripped: true, RetryAfter: time.Hour}
	if err := e.guard.BlockStarted(ctx, otp.FraudTarget{Phone: "+819012345678", Region: "JP", ClientIP: "192.0.2.1"}, gs, why, now); err != nil {
		t.Fatal(err)
	}
	challenged := tripWhy(rate.ScopeIPNet, "198.51.100.0/24", rate.FraudChallenged)
	challenged.Signal, challenged.Level = rate.SignalCountries, 1
	challenged.Figures.Countries, challenged.Figures.CountriesAllowed = 5, 3
	refused := otp.DeniedSend{ID: "0190a000-0000-7000-8000-000000000001", Phone: "+819012345670", ClientIP: "198.51.100.7",
		Status: otp.SendBlocked, Reason: "challenge ip_net 198.51.100.0/24", Fraud: &challenged, Time: now}
	e.store.RecordDenied(refused)          // the Fraud page's store
	e.adminEnv.store.RecordDenied(refused) // history's
	summary := "12 unapproved sends in the recent horizon (floor 10), conversion 0 % against a baseline of 60 % × 0.3"

	t.Run("TheBlockSaysWhyInItsReasonAndWhy", func(t *testing.T) {
		got := getJSON[struct{ Blocks []fraudBlock }](t, e.adminEnv, "/admin/api/fraud/blocks")
		if len(got.Blocks) != 1 || got.Blocks[0].Why == nil {
			t.Fatalf("got %+v, want the block with its why", got)
		}
		b := got.Blocks[0]
		if b.Why.Summary != summary || b.Why.Figures.Floor != 10 || b.Why.Figures.Threshold != 0.18 || b.Why.Action != rate.FraudTripped {
			t.Errorf("why: got %+v", b.Why)
		}
		if want := summary + "; tripped by a send to +819*******78 from 192.0.2.1"; b.Reason != want {
			t.Errorf("reason: got %q, want %q", b.Reason, want)
		}
	})

	t.Run("ASendSaysWhy", func(t *testing.T) {
		got := getJSON[sendsResponse](t, e.adminEnv, "/admin/api/sends")
		if len(got.Sends) < 1 || got.Sends[0].Fraud == nil {
			t.Fatalf("got %+v, want the challenged send with its why", got)
		}
		f := got.Sends[0].Fraud
		if f.Action != rate.FraudChallenged || f.Signal != rate.SignalCountries || f.Level != 1 || f.Figures.Countries != 5 ||
			!strings.HasPrefix(f.Summary, "5 distinct countries from one network (allowed 3)") {
			t.Errorf("got %+v", f)
		}
		one := getJSON[adminSend](t, e.adminEnv, "/admin/api/sends/"+got.Sends[0].ID)
		if one.Fraud == nil || one.Fraud.Summary != f.Summary {
			t.Errorf("one send: got %+v, want the same why", one.Fraud)
		}
	})

	t.Run("AVerificationShowsItsTestMarkAndWhy", func(t *testing.T) {
		passed := tripWhy(rate.ScopePrefix, "+81901234", rate.FraudPassed)
		start, err := e.adminEnv.store.BeginSend(ctx, otp.BeginSend{
			Phone: "+819012345671", Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "webhook", Now: now,
			TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5, NewVerificationID: "0190a000-0000-7000-8000-000000000002",
			SendID: "0190a000-0000-7000-8000-000000000003", CodeHash: func(string) []byte { return []byte(testCodeHash) },
			Fraud: &passed, Test: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		got := getJSON[verificationResponse](t, e.adminEnv, "/admin/api/verifications/"+start.Verification.ID)
		if !got.Verification.Test || len(got.Sends) != 1 || !got.Sends[0].Test || got.Sends[0].Fraud == nil || got.Sends[0].Fraud.Action != rate.FraudPassed {
			t.Errorf("API: got %+v, want a test verification whose send passed a challenge", got)
		}
		body := e.page(t, "/admin/verifications/"+start.Verification.ID, http.StatusOK)
		for _, want := range []string{"test number", `<details class="why why-passed">`, "why: passed (level 3)"} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
	})

	t.Run("TheFraudPageShowsTheWhyOfBlocksAndChallenges", func(t *testing.T) {
		body := e.page(t, "/admin/fraud", http.StatusOK)
		for _, want := range []string{`<details class="why why-tripped">`, summary, "Recent challenges",
			`<details class="why why-challenged">`, "5 distinct over the long horizon (allowed 3)", "+819012345670"} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Contains(body, "No send was challenged.") {
			t.Error("page says no send was challenged")
		}
		for _, name := range fraud.FieldNames() {
			if !strings.Contains(body, `name="`+name+`"`) || !strings.Contains(body, fraud.EnvName(name)) {
				t.Errorf("the rule editor lacks %s", name)
			}
		}
	})

	t.Run("HistoryShowsTheWhy", func(t *testing.T) {
		if body := e.page(t, "/admin/", http.StatusOK); !strings.Contains(body, `<details class="why why-challenged">`) {
			t.Error("history lacks the why panel")
		}
	})

	t.Run("TheYoungCountriesPoolReadsAsAPool", func(t *testing.T) {
		pool := rate.GuardState{Scope: rate.ScopeYoungCountries, Key: rate.KeyPool, Challenged: true, Tripped: true, RetryAfter: time.Hour}
		pw := tripWhy(rate.ScopeYoungCountries, rate.KeyPool, rate.FraudTripped)
		pw.Signal = rate.SignalYoungCountries
		if err := e.guard.BlockStarted(ctx, otp.FraudTarget{Phone: "+2250701234567", Region: "CI", ClientIP: "192.0.2.1"}, pool, pw, now); err != nil {
			t.Fatal(err)
		}
		body := e.page(t, "/admin/fraud", http.StatusOK)
		for _, want := range []string{"young countries' pool", "challenging", "unapproved sends to young countries"} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Contains(body, "young_countries all") {
			t.Error("page shows the pool as a target")
		}
		got := getJSON[struct{ Blocks []fraudBlock }](t, e.adminEnv, "/admin/api/fraud/blocks")
		if len(got.Blocks) != 2 || got.Blocks[0].Scope != rate.ScopeYoungCountries {
			t.Errorf("blocks: got %+v, want the pool first", got.Blocks)
		}
	})
}
