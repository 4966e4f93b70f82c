package otp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// fakeFraud screens as told and records what the service told it.
type fakeFraud struct {
	mu sync.Mutex
	// Verdict is what Screen answers.
	Verdict otp.Screening

	screened []otp.FraudTarget
	approved []otp.FraudTarget
	started  []rate.GuardState
	whys     []rate.FraudExplanation
}

func (f *fakeFraud) Screen(t otp.FraudTarget) otp.Screening {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.screened = append(f.screened, t)
	return f.Verdict
}

func (f *fakeFraud) Approved(_ context.Context, t otp.FraudTarget, _ otp.Approval) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approved = append(f.approved, t)
	return nil
}

func (f *fakeFraud) BlockStarted(_ context.Context, _ otp.FraudTarget, g rate.GuardState, why rate.FraudExplanation, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, g)
	f.whys = append(f.whys, why)
	return nil
}

// guardedLimiter is the fake limiter with the guard's answer added to every decision:
// Guards as its guard states, refusing when one of them refuses or demands a challenge.
type guardedLimiter struct {
	*fakeLimiter
	Guards []rate.GuardState
	// Shadow marks the decision's rules as shadow rules that would have refused.
	Shadow bool
}

func (l *guardedLimiter) Allow(ctx context.Context, limits []rate.Limit) (rate.Decision, error) {
	d, err := l.fakeLimiter.Allow(ctx, limits)
	if err != nil {
		return d, err
	}
	d.Guards = l.Guards
	for _, g := range d.Guards {
		if g.Refuses() || g.Demands() {
			d.Allowed, d.Reservation = false, rate.Reservation{}
		}
	}
	if l.Shadow {
		for i := range d.Rules {
			d.Rules[i].Rule.Shadow, d.Rules[i].Violated = true, true
		}
	}
	return d, nil
}

// fraudEnv is newEnv's service with a fraud step and a limiter that answers for guards.
func fraudEnv(t *testing.T) (*env, *fakeFraud, *guardedLimiter) {
	t.Helper()
	e := newEnv(t)
	cfg := otp.Config{
		Secret: []byte("test secret of the unit tests"), CodeLength: 6, CodeTTL: 5 * time.Minute,
		MaxSends: 5, MaxAttempts: 3,
		PhoneRules: []rate.Rule{{Limit: 1, Window: time.Minute}}, IPRules: []rate.Rule{{Limit: 10, Window: time.Hour}},
		CheckPhoneRules: []rate.Rule{{Limit: 5, Window: time.Minute}},
		SMSTimeout:      time.Second, LimiterTimeout: time.Second, StoreTimeout: time.Second,
	}
	gl := &guardedLimiter{fakeLimiter: e.limiter}
	f := &fakeFraud{}
	e.svc = otp.NewService(cfg, e.store, gl, e.sender, mustRenderer(t), e.denied, slog.New(slog.DiscardHandler))
	e.svc.Now = e.clock.Now
	var n int
	e.svc.NewID = func() string { n++; return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }
	e.svc.Rand = codeReader(codes...)
	e.svc.UseFraud(f)
	return e, f, gl
}

func TestSendFraudStep(t *testing.T) {
	ctx := context.Background()
	prefix := rate.Limit{Scope: rate.ScopePrefix, Key: "+8190123", Rules: []rate.Rule{{Limit: 10, Window: time.Hour}}}

	t.Run("BlockListAnswersBeforeAnythingIsSpent", func(t *testing.T) {
		e, f, _ := fraudEnv(t)
		f.Verdict = otp.Screening{Blocked: "prefix +8190123"}
		_, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP})
		var blocked *otp.ErrBlocked
		if !errors.As(err, &blocked) || blocked.Entry != "prefix +8190123" || otp.ErrorCode(err) != otp.CodeBlocked {
			t.Fatalf("got %v, want *otp.ErrBlocked naming the entry", err)
		}
		if got := e.limiter.Allows(); len(got) != 0 {
			t.Errorf("limiter asked: got %v, want nothing spent", got)
		}
		if got := e.sender.Messages(); len(got) != 0 {
			t.Errorf("sent %v, want nothing", got)
		}
		if got := e.denied.Got(); len(got) != 1 || got[0].Reason != "block_list prefix +8190123" || got[0].Status != otp.SendBlocked {
			t.Errorf("history: got %+v, want one blocked send naming the entry", got)
		}
		if got := f.screened; len(got) != 1 || got[0] != (otp.FraudTarget{Phone: testPhone, Region: "JP", ClientIP: testIP}) {
			t.Errorf("screened %+v, want the normalised number, its country and the client", got)
		}
	})

	t.Run("BlockListedSendIsFiledUnderItsApp", func(t *testing.T) {
		e, f, _ := fraudEnv(t)
		f.Verdict = otp.Screening{Blocked: "prefix +8190123"}
		app := otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 3}.DefaultApp()
		app.ID = "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8d"
		if _, err := e.svc.Send(ctx, otp.SendInput{App: &app, Phone: testPhone, ClientIP: testIP}); otp.ErrorCode(err) != otp.CodeBlocked {
			t.Fatalf("got %v, want blocked", err)
		}
		if got := e.denied.Got(); len(got) != 1 || got[0].AppID != app.ID {
			t.Errorf("history: got %+v, want one blocked send of app %s", got, app.ID)
		}
	})

	t.Run("FraudLimitsJoinTheSendPolicy", func(t *testing.T) {
		e, f, _ := fraudEnv(t)
		f.Verdict = otp.Screening{Limits: []rate.Limit{prefix}}
		e.send(t)
		allows := e.limiter.Allows()
		if len(allows) != 1 {
			t.Fatalf("got %d limiter calls, want one", len(allows))
		}
		last := allows[0][len(allows[0])-1]
		if last.Scope != rate.ScopePrefix || last.Key != "+8190123" {
			t.Errorf("policy: got %+v, want it to end with the prefix limit", allows[0])
		}
	})

	t.Run("AGuardBlockIsFraudBlocked", func(t *testing.T) {
		e, _, gl := fraudEnv(t)
		gl.Guards = []rate.GuardState{{Scope: rate.ScopePrefix, Key: "+8190123", Blocked: true, RetryAfter: 3 * time.Hour}}
		_, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP})
		var fb *otp.ErrFraudBlocked
		if !errors.As(err, &fb) || fb.Scope != rate.ScopePrefix || fb.RetryAfter != 3*time.Hour || otp.ErrorCode(err) != otp.CodeFraudBlocked {
			t.Fatalf("got %v, want *otp.ErrFraudBlocked for the prefix, 3h", err)
		}
		if got := e.sender.Messages(); len(got) != 0 {
			t.Errorf("sent %v, want nothing", got)
		}
		if got := e.denied.Got(); len(got) != 1 || got[0].Reason != "fraud_guard prefix +8190123" {
			t.Errorf("history: got %+v, want the guard's reason", got)
		}
	})

	t.Run("ATripIsRecorded", func(t *testing.T) {
		e, f, gl := fraudEnv(t)
		trip := rate.GuardState{Scope: rate.ScopeIPNet, Key: "192.0.2.0/24", Blocked: true, Tripped: true, RetryAfter: 12 * time.Hour}
		gl.Guards = []rate.GuardState{trip}
		if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP}); otp.ErrorCode(err) != otp.CodeFraudBlocked {
			t.Fatalf("got %v, want fraud_blocked", err)
		}
		if got := f.started; len(got) != 1 || got[0] != trip {
			t.Errorf("blocks started: got %+v, want the trip", got)
		}
	})

	guarded := rate.Limit{Scope: rate.ScopePrefix, Key: "+8190123", Guard: &rate.Guard{Floor: 10,
		Params: rate.GuardParams{Ratio: 0.3, PriorRate: 0.6, PriorWeight: 20}}}

	t.Run("ARefusalAndItsTripSayWhy", func(t *testing.T) {
		e, f, gl := fraudEnv(t)
		f.Verdict = otp.Screening{Limits: []rate.Limit{guarded}}
		gl.Guards = []rate.GuardState{{Scope: rate.ScopePrefix, Key: "+8190123", Blocked: true, Tripped: true, Signal: rate.SignalRecent,
			RetryAfter: time.Hour, Counts: rate.GuardCounts{RecentSends: 11, LongSends: 11}}}
		if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP}); otp.ErrorCode(err) != otp.CodeFraudBlocked {
			t.Fatalf("got %v, want fraud_blocked", err)
		}
		got := e.denied.Got()
		if len(got) != 1 || got[0].Fraud == nil || got[0].Fraud.Action != rate.FraudTripped || got[0].Fraud.Figures.RecentUnapproved != 12 {
			t.Fatalf("history: got %+v, want the trip explained with 12 unapproved sends", got)
		}
		if len(f.whys) != 1 || f.whys[0] != *got[0].Fraud {
			t.Errorf("block's why: got %+v, want the send's %+v", f.whys, *got[0].Fraud)
		}
	})

	t.Run("AChallengeSaysWhyAndARuleRefusalDoesNot", func(t *testing.T) {
		e, f, gl := fraudEnv(t)
		f.Verdict = otp.Screening{Limits: []rate.Limit{guarded}}
		gl.Guards = []rate.GuardState{{Scope: rate.ScopePrefix, Key: "+8190123", Challenged: true, Challenge: 2, Signal: rate.SignalVolume}}
		_, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP})
		if otp.ErrorCode(err) != otp.CodeFraudBlocked { // no challenger: refused as blocked
			t.Fatalf("got %v, want fraud_blocked", err)
		}
		got := e.denied.Got()
		if len(got) != 1 || got[0].Fraud == nil || got[0].Fraud.Action != rate.FraudChallenged || got[0].Fraud.Level != 2 {
			t.Fatalf("history: got %+v, want the challenge explained", got)
		}
		gl.Guards = nil
		e.limiter.Deny = []rate.RuleState{{Scope: otp.ScopePhone, Key: testPhone, Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, Violated: true}}
		if _, err := e.svc.Send(ctx, otp.SendInput{Phone: testPhone, ClientIP: testIP}); otp.ErrorCode(err) != otp.CodeRateLimited {
			t.Fatalf("got %v, want rate_limited by the phone's 1/1m", err)
		}
		if got := e.denied.Got(); len(got) < 2 || got[len(got)-1].Fraud != nil {
			t.Errorf("history: got %+v, want a rule's refusal without an explanation", got)
		}
	})

	t.Run("ShadowFindingsGoOnTheSend", func(t *testing.T) {
		e, _, gl := fraudEnv(t)
		gl.Shadow = true
		gl.Guards = []rate.GuardState{{Scope: rate.ScopePrefix, Key: "+8190123", Shadow: true, Blocked: true}}
		res := e.send(t)
		sends := e.sender.Messages()
		if len(sends) != 1 {
			t.Fatalf("got %d messages, want the send to go out", len(sends))
		}
		row := e.sendRow(t, sends[0].ID)
		if want := "phone 1/1m:shadow; ip 10/1h:shadow; fraud_guard prefix +8190123"; row.Shadow != want {
			t.Errorf("shadow on the send: got %q, want %q", row.Shadow, want)
		}
		if row.Fraud != nil {
			t.Errorf("why on the send: got %+v, want none without the guard's limit in the policy", row.Fraud)
		}
		if !res.Created {
			t.Errorf("got %+v, want a new verification", res)
		}
	})

	t.Run("AnApprovalIsCountedForTheSendsTargets", func(t *testing.T) {
		e, f, _ := fraudEnv(t)
		e.send(t)
		if _, err := e.check(codes[0]); err != nil {
			t.Fatalf("check: %v", err)
		}
		if _, err := e.check("000000"); err == nil {
			t.Fatal("second check: got approved, want refused")
		}
		want := otp.FraudTarget{Phone: testPhone, Region: "JP", ClientIP: testIP}
		if got := f.approved; len(got) != 1 || got[0] != want {
			t.Errorf("approvals: got %+v, want one for %+v", got, want)
		}
	})
}
