package ratelimit

import (
	"testing"
	"time"

	"otpgate/internal/rate"
)

// TestArgsAreSizedUpFront lays out a policy with rules, a guard and a budget, as a default
// send's, and checks the script's arguments filled the slice args sized for them: a layout
// that outgrows it (a new argument left out of the count) copies it on every decision.
func TestArgsAreSizedUpFront(t *testing.T) {
	l := New(nil, "t:")
	policy := []rate.Limit{
		{Scope: "phone", Key: "+819012345678", Rules: []rate.Rule{{Limit: 1, Window: time.Minute}, {Limit: 5, Window: time.Hour}}},
		{Scope: "ip", Key: "192.0.2.1", Rules: []rate.Rule{{Limit: 10, Window: time.Hour}}},
		guarded(testGuard(3, false)),
		budgetLimit(rate.BudgetEnforce, 100, 1),
	}
	p, err := l.plan(policy)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{modeAllow, modePeek, modeUndo} {
		all := make([]int, len(p.keys))
		for i := range all {
			all[i] = i
		}
		keys, args, _ := l.args(mode, "id", p, all, undo{})
		if len(keys) != len(p.keys) || len(args) != cap(args) {
			t.Errorf("%s: %d keys of %d, %d args in a slice sized %d; want every key and a slice sized exactly", mode, len(keys), len(p.keys), len(args), cap(args))
		}
	}
}
