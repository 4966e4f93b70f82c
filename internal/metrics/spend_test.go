package metrics

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// nopSpend is a spend step that prices nothing and records nothing.
type nopSpend struct{ decided int }

func (n *nopSpend) Quote(otp.SpendQuery) otp.Quote { return otp.Quote{} }
func (n *nopSpend) Decided(context.Context, otp.SpendQuery, []rate.Limit, rate.Decision) {
	n.decided++
}

// costly answers every send with a cost.
type costly struct{ otp.Verifier }

func (costly) Send(context.Context, otp.SendInput) (otp.SendResult, error) {
	return otp.SendResult{Verification: otp.Verification{AppID: ""}, Channel: "sms", Country: "JP", Cost: 81_700, Currency: "USD"}, nil
}

func TestSpendMetrics(t *testing.T) {
	m := New()
	v := m.Verifier(costly{})
	for range 2 {
		if _, err := v.Send(context.Background(), otp.SendInput{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := counter(t, m, "otpgate_spend_total", "app", otp.DefaultAppID, "country", "JP", "channel", "sms"); got < 0.16339 || got > 0.16341 {
		t.Errorf("spend: got %v, want 0.1634", got)
	}

	next := &nopSpend{}
	s := m.Spend(next)
	policy := []rate.Limit{{Scope: otp.ScopeBudget, Key: "watch:day:20300102",
		Budget: &rate.Budget{Mode: rate.BudgetShadow, Cap: 100, Cost: 60, Name: "watch", Period: "day", Resets: time.Now()}}}
	over := rate.BudgetState{Scope: otp.ScopeBudget, Key: "watch:day:20300102", Mode: rate.BudgetShadow, Cap: 100, Cost: 60, Spent: 120, Over: true}
	s.Decided(context.Background(), otp.SpendQuery{}, policy, rate.Decision{Allowed: true, Budgets: []rate.BudgetState{over}})
	// Refused by another rule: the shadow budget let nothing through.
	s.Decided(context.Background(), otp.SpendQuery{}, policy, rate.Decision{Allowed: false, Budgets: []rate.BudgetState{over}})
	if got := counter(t, m, "otpgate_budget_shadow_total", "budget", "watch"); got != 1 {
		t.Errorf("shadow: got %v, want 1", got)
	}
	if got := counter(t, m, "otpgate_budget_used_ratio", "budget", "watch", "period", "day"); got != 1.2 {
		t.Errorf("used ratio: got %v, want 1.2", got)
	}
	if next.decided != 2 {
		t.Errorf("the spend step heard %d decisions, want 2", next.decided)
	}
}
