package main

import (
	"bytes"
	"testing"

	"otpgate/internal/testenv"
)

// TestPumpingShort runs the short pumping simulation against the real binary and holds it to
// the bounds: enforcing, an attack gets at most 100 SMS through and at most 1 % of
// legitimate sends are refused, fresh install or established; a legitimate 10× surge is
// never refused; in shadow mode nothing legitimate is refused and the would-blocks are
// recorded. The full table comes from `go run ./cmd/loadgen -scenario pumping`.
func TestPumpingShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the pumping simulation takes about a minute")
	}
	vars := map[string]string{"REDIS_URL": testenv.RedisURL(t), "DATABASE_URL": testenv.PostgresURL(t)}
	o := options{bin: testenv.ServerBinary(t)}
	runs := []pumpingRun{{caseFresh, "enforce"}, {caseFresh, "shadow"}, {caseEstablished, "enforce"}, {caseSurge, "enforce"}}
	var log bytes.Buffer
	results, err := simulate(t.Context(), o, shortPlan(), runs, func(k string) string { return vars[k] }, &log)
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, log.String())
	}
	var table bytes.Buffer
	pumpingReport{plan: shortPlan(), args: []string{"loadgen"}, results: results}.table(&table)
	t.Logf("\n%s", table.String())
	for _, r := range results {
		t.Run(r.run.kase+"/"+r.run.mode, func(t *testing.T) {
			if r.legitSent == 0 || r.legitApproved == 0 {
				t.Fatalf("got %d legitimate sends and %d approvals, want traffic", r.legitSent, r.legitApproved)
			}
			switch {
			case r.run.kase == caseSurge:
				if r.legitRefused != 0 || r.blocks != 0 {
					t.Errorf("surge: got %d legitimate sends refused and %d blocks, want none (refusals: %s)", r.legitRefused, r.blocks, refusals(r.legitRefusals))
				}
			case r.run.mode == "shadow":
				if r.legitRefused != 0 {
					t.Errorf("shadow: got %d legitimate sends refused, want none (%s)", r.legitRefused, refusals(r.legitRefusals))
				}
				if r.shadowBlocks == 0 || r.shadowFlagged == 0 {
					t.Errorf("shadow: got %d would-blocks and %d flagged sends, want both recorded", r.shadowBlocks, r.shadowFlagged)
				}
			default:
				if r.attackSent < 100 || r.attackDelivered > 100 || !r.contained {
					t.Errorf("attack: got %d of %d delivered, contained %v, want at most 100 and contained", r.attackDelivered, r.attackSent, r.contained)
				}
				if r.legitRefused*100 > r.legitSent {
					t.Errorf("got %d of %d legitimate sends refused, want at most 1 %% (%s)", r.legitRefused, r.legitSent, refusals(r.legitRefusals))
				}
			}
		})
	}
}
