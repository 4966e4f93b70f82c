package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// pumpingReport is the whole simulation.
type pumpingReport struct {
	plan    pumpingPlan
	args    []string
	results []pumpResult
	when    time.Time
}

// containment renders when the attack stopped getting SMS through.
func (r pumpResult) containment() string {
	switch {
	case r.run.kase == caseSurge:
		return "(no attack)"
	case !r.contained:
		return "not contained"
	}
	return fmt.Sprintf("%.1f s", r.lastDelivery.Seconds())
}

// attackCell renders the attacker's SMS delivered out of the sends made.
func (r pumpResult) attackCell() string {
	if r.run.kase == caseSurge {
		return "–"
	}
	return fmt.Sprintf("%d of %d", r.attackDelivered, r.attackSent)
}

// legitRefusedCell renders the legitimate sends refused, with their share.
func (r pumpResult) legitRefusedCell() string {
	share := 0.0
	if r.legitSent > 0 {
		share = 100 * float64(r.legitRefused) / float64(r.legitSent)
	}
	return fmt.Sprintf("%d of %d (%.2f %%)", r.legitRefused, r.legitSent, share)
}

// approvalsCell renders the legitimate approvals of the checks made.
func (r pumpResult) approvalsCell() string {
	return fmt.Sprintf("%d of %d checks", r.legitApproved, r.legitChecks)
}

// guardCell renders what the guard did: blocks and what shadow mode would have done.
func (r pumpResult) guardCell() string {
	var parts []string
	if r.blocks > 0 {
		parts = append(parts, fmt.Sprintf("%d blocks (%s)", r.blocks, r.blockedScopes))
	}
	if r.shadowBlocks > 0 || r.shadowFlagged > 0 {
		parts = append(parts, fmt.Sprintf("would block %d (%s), %d sends flagged", r.shadowBlocks, r.blockedScopes, r.shadowFlagged))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// refusals renders how refusals were answered, such as "fraud_blocked×1200 rate_limited×40".
func refusals(m map[string]int) string {
	var codes []string
	for c := range m {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%s×%d", c, m[c]))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " ")
}

var pumpingHeader = []string{"case", "guard", "attacker SMS delivered", "seconds to containment", "legit sends refused", "legit approvals", "fraud guard"}

func (r pumpResult) cells() []string {
	return []string{r.run.kase, r.run.mode, r.attackCell(), r.containment(), r.legitRefusedCell(), r.approvalsCell(), r.guardCell()}
}

// table writes the results for a terminal.
func (rep pumpingReport) table(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(pumpingHeader, "\t"))
	for _, r := range rep.results {
		fmt.Fprintln(tw, strings.Join(r.cells(), "\t"))
	}
	tw.Flush()
}

// writeMarkdown writes the table, the refusals and how it was made to path.
func (rep pumpingReport) writeMarkdown(path string) error {
	var b bytes.Buffer
	p := rep.plan
	fmt.Fprintf(&b, "# SMS pumping simulation\n\n")
	fmt.Fprintf(&b, "`%s`, %s, on %d CPUs (%s/%s). Guard horizons compressed to %s (recent) and %s (baseline); "+
		"the default phone and IP rules. Legitimate traffic %.0f sends/s over %d countries, approval 60–95 %%, checks %s–%s after the send; "+
		"the attack %.0f sends/s from %d rotating addresses over 4 /16s into %s, never approved, for %s; the established cases first run %s of "+
		"legitimate traffic; the surge is %.0f× the traffic for %s.\n\n",
		"go run ./cmd/loadgen "+strings.Join(rep.args[1:], " "), rep.when.Format(time.RFC3339), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		p.shortHorizon, p.longHorizon, p.legitRate, len(countries()), p.checkMin, p.checkMax,
		p.attackRate, p.attackIPs, describeTargets(p.attackPrefixes), p.attack, p.warmup, p.surgeFactor, p.surge)
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(pumpingHeader, " | "), strings.Repeat("---|", len(pumpingHeader)))
	for _, r := range rep.results {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r.cells(), " | "))
	}
	fmt.Fprintf(&b, "\nHow refusals were answered:\n\n| case | guard | attack | legitimate |\n|---|---|---|---|\n")
	for _, r := range rep.results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.run.kase, r.run.mode, refusals(r.attackRefusals), refusals(r.legitRefusals))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func describeTargets(ts []attackTarget) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%d prefixes of %s", t.n, t.region))
	}
	return strings.Join(parts, " and ")
}
