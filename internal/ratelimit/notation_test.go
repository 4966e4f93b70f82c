package ratelimit

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/rate"
)

func TestGuardSettingsAtTheEndsOfTheirRanges(t *testing.T) { onBackends(t, testGuardSettingsNotation) }

// testGuardSettingsNotation runs the guard with settings the fraud settings accept whose
// shortest decimal form has an exponent (1e+06, 1e-06): the script reads them as the
// numbers they are on either Redis, and so does it read the counts it wrote from them.
func testGuardSettingsNotation(t *testing.T, newLimiter backend) {
	ctx := context.Background()
	for name, set := range map[string]func(g *rate.Guard){
		"PriorWeightOfAMillion":   func(g *rate.Guard) { g.Params.PriorWeight = 1e6 },
		"PriorWeightOfAMillionth": func(g *rate.Guard) { g.Params.PriorWeight = 1e-6 },
		"RatioOfAMillionth":       func(g *rate.Guard) { g.Params.Ratio = 1e-6 },
		"SurgeOfAThousand":        func(g *rate.Guard) { g.Params.Surge = 1e3; g.VolumeFloor = 1_000_000; g.VolumeRatio = 1e-6 },
	} {
		t.Run(name, func(t *testing.T) {
			l, rdb := newLimiter(t)
			c := newClock()
			l.Clock = c.Now
			g := testGuard(1_000_000, false)
			set(g)
			lim := guarded(g)
			for i := range 3 {
				if _, err := l.Allow(ctx, []rate.Limit{lim}); err != nil {
					t.Fatalf("send %d: got %v, want a decision", i+1, err)
				}
				c.Add(time.Second)
			}
			if err := l.Approve(ctx, []rate.Limit{lim}, 1e-6); err != nil {
				t.Fatalf("Approve: %v", err)
			}
			if _, approvals := counts(t, l, rdb, lim); !(approvals > 0 && approvals < 2e-6) {
				t.Errorf("got %v recent approvals stored, want the one approval of weight 1e-06", approvals)
			}
			// Twice at the same instant: the first send writes the undecayed count of 1e-06
			// back into the guard's hash (the sends' script, not the approvals'), the second
			// reads what it wrote.
			for i := range 2 {
				d, err := l.Allow(ctx, []rate.Limit{lim})
				if err != nil {
					t.Fatalf("send %d after an approval of weight 1e-06: got %v, want a decision", i+1, err)
				}
				if gs := d.Guards[0]; !d.Allowed || gs.Blocked {
					t.Errorf("send %d: got allowed %v guard %+v, want allowed under a floor of a million", i+1, d.Allowed, gs)
				}
			}
		})
	}
}
