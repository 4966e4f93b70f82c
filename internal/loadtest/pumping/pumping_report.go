package pumping

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

	"otpgate/internal/spend"
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
	case !attacked(r.run.kase):
		return "(no attack)"
	case !r.contained:
		return "not contained"
	}
	return fmt.Sprintf("%.1f s", r.lastDelivery.Seconds())
}

// attackCell renders the attacker's SMS delivered out of the sends made.
func (r pumpResult) attackCell() string {
	if !attacked(r.run.kase) {
		return "–"
	}
	if r.attackChecks > 0 {
		return fmt.Sprintf("%d of %d (%d codes entered)", r.attackDelivered, r.attackSent, r.attackApproved)
	}
	if r.attackSolved > 0 {
		return fmt.Sprintf("%d of %d (%d challenges solved)", r.attackDelivered, r.attackSent, r.attackSolved)
	}
	return fmt.Sprintf("%d of %d", r.attackDelivered, r.attackSent)
}

// costCell renders what the attacker's delivered SMS cost under the shipped price table.
func (r pumpResult) costCell() string {
	if !attacked(r.run.kase) {
		return "–"
	}
	return spend.DefaultCurrency + " " + spend.FormatAmount(r.attackCost) + r.capCell()
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

var pumpingHeader = []string{"case", "guard", "attacker SMS delivered", "their cost (shipped prices)", "seconds to containment", "legit sends refused", "legit challenged (solved)", "legit approvals", "fraud guard"}

func (r pumpResult) cells() []string {
	return []string{r.run.kase, r.run.mode, r.attackCell(), r.costCell(), r.containment(), r.legitRefusedCell(), fmt.Sprint(r.legitChallenged), r.approvalsCell(), r.guardCell()}
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
		"every other setting the default. Legitimate traffic %.0f sends/s over %d countries, approval 60–95 %%, checks %s–%s after the send, "+
		"a challenge solved and the send repeated when one is asked; every case but fresh first runs %s of legitimate traffic. Cases:\n\n",
		"go run ./cmd/loadgen "+strings.Join(rep.args[1:], " "), rep.when.Format(time.RFC3339), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		p.shortHorizon, p.longHorizon, p.legitRate, len(countries()), p.checkMin, p.checkMax, p.warmup)
	for _, c := range caseNames() {
		fmt.Fprintf(&b, "- **%s**: %s.\n", c, caseWhat[c])
	}
	fmt.Fprintf(&b, "\nThe fast botnet sends %.0f/s from %d rotating addresses over 4 /16s into three prefixes of UZ and KG for %s; "+
		"low and slow paces 30 prefixes of UZ, KG, TJ and AZ and 30 /24s at a quarter of a send a second each for %s; the fraud farm sends 8/s into three prefixes "+
		"and enters half its codes 0.2–0.6 s after the send; country hopping sends 20/s to any number of 24 countries; the proxies send 20/s into three "+
		"prefixes, each request from a new /24; the surge is %.0f× the traffic for %s; the office's 30 testers ask a little more than once a minute and "+
		"enter 90 %% of their codes; the launch adds a quarter of the traffic in %s, approving 85 %%. The solver sends 12/s into three prefixes "+
		"of UZ and KG for %s and solves every challenge it is given (no other attacker solves one); the capped case sets a global daily budget of "+
		"%d times what the legitimate traffic spends over the run, every other budget setting the default, and runs the fast botnet into UZ and KG "+
		"after %s of legitimate traffic.\n\n",
		p.attackRate, p.attackIPs, p.attack, p.slow, p.surgeFactor, p.surge, launchRegion, p.solve, capHeadroom, p.capWarmup)
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
