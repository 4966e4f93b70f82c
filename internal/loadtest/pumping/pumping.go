// Package pumping is loadgen's SMS pumping simulation (go run ./cmd/loadgen -scenario
// pumping, docs/fraud.md).
//
// The pumping simulation drives the real binary with legitimate background traffic — many
// countries and networks, approval rates of 60 to 95 %, each code checked a few seconds
// after its send — and, in the attacked cases, SMS pumping: a few narrow prefixes of two
// countries, thousands of rotating addresses over several /16s, never approved. It compresses
// the guard's horizons through its configuration, so that hour-long baselines fit into a
// couple of minutes, and runs each case with the guard off, in shadow and enforcing.
package pumping

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"otpgate/internal/loadtest"
)

// Options are the flags of -scenario pumping.
type Options struct {
	short        bool
	cases, modes string
}

// Flags registers the flags on fs.
func (p *Options) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&p.short, "short", false, "pumping: the short version, about a minute in all, as make test runs it")
	fs.StringVar(&p.cases, "cases", "fresh,established,surge,slow,converting,hopping,proxies,office,launch,solver,capped", "pumping: cases to run")
	fs.StringVar(&p.modes, "modes", "off,shadow,enforce", "pumping: fraud guard modes to run each case in")
}

// pumpingPlan sizes a simulation.
type pumpingPlan struct {
	// legitRate is the background's sends per second; surgeFactor multiplies it in the surge.
	legitRate, surgeFactor float64
	// attackRate is the fast botnet's sends per second, from attackIPs rotating addresses.
	attackRate float64
	attackIPs  int
	// warmup is the legitimate traffic before an established install's attack or surge;
	// attack and surge are how long those last; slow is how long the low-and-slow attack,
	// the office and the launch last; solve how long the challenge solver attacks.
	warmup, attack, surge, slow, solve time.Duration
	// capWarmup is the capped case's legitimate traffic before its attack: long enough for
	// the smaller countries to have approvals, and so a share of the budget, of their own.
	capWarmup time.Duration
	// A legitimate user checks between checkMin and checkMax after the send.
	checkMin, checkMax time.Duration
	// shortHorizon and longHorizon compress the guard's 10m and 7d.
	shortHorizon, longHorizon string
	// redisTimeout, when set, is the servers' OTP_REDIS_TIMEOUT: the short plan runs beside
	// every other -race package on a small machine, where the default 200 ms answers 503s
	// that say nothing of the guard.
	redisTimeout string
}

// Plans of the full simulation and of its short version.
func fullPlan() pumpingPlan {
	return pumpingPlan{
		legitRate: 8, surgeFactor: 10, attackRate: 40, attackIPs: 2000,
		warmup: 2 * time.Minute, attack: 90 * time.Second, surge: time.Minute, slow: 3 * time.Minute, solve: 5 * time.Minute,
		capWarmup: 2 * time.Minute,
		checkMin:  time.Second, checkMax: 4 * time.Second,
		shortHorizon: "30s", longHorizon: "10m",
	}
}

func shortPlan() pumpingPlan {
	p := fullPlan()
	p.legitRate, p.warmup, p.attack, p.surge, p.slow, p.solve = 5, 8*time.Second, 8*time.Second, 8*time.Second, 20*time.Second, 20*time.Second
	p.checkMax = 3 * time.Second
	p.capWarmup = 40 * time.Second
	p.shortHorizon, p.longHorizon = "30s", "5m"
	p.redisTimeout = "1s"
	return p
}

// prefixDrop is the servers' OTP_PREFIX_DROP, the default.
const prefixDrop = 4

// The cases.
const (
	caseFresh       = "fresh"
	caseEstablished = "established"
	caseSurge       = "surge"
	caseSlow        = "slow"
	caseConverting  = "converting"
	caseHopping     = "hopping"
	caseProxies     = "proxies"
	caseOffice      = "office"
	caseLaunch      = "launch"
	caseSolver      = "solver"
	caseCapped      = "capped"
)

var caseWhat = map[string]string{
	caseFresh:       "a fresh install attacked by a fast botnet",
	caseEstablished: "an established install attacked by a fast botnet",
	caseSurge:       "an established install, a legitimate 10× surge, no attack",
	caseSlow:        "an established install attacked low and slow, under every recent floor",
	caseConverting:  "an established install attacked by a fraud farm that enters half its codes",
	caseHopping:     "an established install attacked over 24 countries",
	caseProxies:     "an established install attacked through residential proxies, each request from a new /24",
	caseOffice:      "an established install, an office of 30 testers on one /24, no attack",
	caseLaunch:      "an established install, a launch in a new country, no attack",
	caseSolver:      "an established install attacked by a botnet that solves every challenge it is given",
	caseCapped:      "an established install under a global daily budget, a fast botnet on countries without history",
}

// attacked reports whether a case has an attack.
func attacked(kase string) bool {
	return kase != caseSurge && kase != caseOffice && kase != caseLaunch
}

// pumpingRun is one case in one mode.
type pumpingRun struct{ kase, mode string }

// pumpResult is what one run measured.
type pumpResult struct {
	run pumpingRun
	// Attack: sends made, SMS delivered (answered 2xx), when the last one was delivered
	// after the attack began, and how its refusals were answered.
	attackSent, attackDelivered int64
	// attackCost is what the delivered SMS cost under the shipped price table (micro-units).
	attackCost     int64
	lastDelivery   time.Duration
	contained      bool
	attackRefusals map[string]int
	// Legitimate traffic: sends, refusals (by code), checks and approvals; challenged counts
	// the sends a challenge was asked of, which the client solved and sent again.
	legitSent, legitRefused, legitChecks, legitApproved, legitChallenged int64
	legitRefusals                                                        map[string]int
	// attackChecks and attackApproved count a converting attacker's entered codes;
	// attackSolved the challenges a solver solved.
	attackChecks, attackApproved, attackSolved int64
	// capMicros is the global daily budget of the capped case (0 in the others).
	capMicros int64
	// From the server's metrics: blocks started (enforcing and shadow) and sends flagged by
	// shadow rules or the shadow guard.
	blocks, shadowBlocks, shadowFlagged int
	blockedScopes                       string
}

// Run runs every case of p in every mode of p against servers set up as o says, and
// reports.
func Run(ctx context.Context, o loadtest.Options, p Options, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	plan := fullPlan()
	if p.short {
		plan = shortPlan()
	}
	var runs []pumpingRun
	for _, c := range strings.Split(p.cases, ",") {
		if _, ok := caseWhat[c]; !ok {
			return fmt.Errorf("-cases: unknown %q (want %s)", c, strings.Join(caseNames(), ", "))
		}
		for _, m := range strings.Split(p.modes, ",") {
			if m != "off" && m != "shadow" && m != "enforce" {
				return fmt.Errorf("-modes: unknown %q (want off, shadow, enforce)", m)
			}
			runs = append(runs, pumpingRun{c, m})
		}
	}
	results, err := simulate(ctx, o, plan, runs, getenv, stderr)
	if err != nil {
		return err
	}
	rep := pumpingReport{plan: plan, args: args, results: results, when: time.Now().UTC()}
	rep.table(stdout)
	if o.Out != "" && o.Out != defaultOut {
		if err := rep.writeMarkdown(o.Out); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "loadgen: wrote %s\n", o.Out)
	}
	return nil
}

// defaultOut is the load report's file, which the pumping simulation does not overwrite.
const defaultOut = "docs/load-report.md"

// simulate runs each case and mode against a fresh server, database and key prefix.
func simulate(ctx context.Context, o loadtest.Options, plan pumpingPlan, runs []pumpingRun, getenv func(string) string, stderr io.Writer) ([]pumpResult, error) {
	if o.Bin == "" {
		bin, remove, err := loadtest.BuildServer(ctx, stderr)
		if err != nil {
			return nil, err
		}
		defer remove()
		o.Bin = bin
	}
	o.Servers, o.Targets = 1, nil
	var out []pumpResult
	for _, run := range runs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fmt.Fprintf(stderr, "loadgen: pumping: %s, guard %s\n", caseWhat[run.kase], run.mode)
		o.ServerEnv = map[string]string{
			"OTP_FRAUD_GUARD": run.mode, "OTP_FRAUD_SHORT_HORIZON": plan.shortHorizon, "OTP_FRAUD_LONG_HORIZON": plan.longHorizon,
			// The default phone and IP rules, as the issue measured; checks as loadgen's others.
			"OTP_LIMIT_IP": "1/1m,10/1h", "OTP_LIMIT_PHONE": "1/1m,10/1h", "OTP_MAX_ATTEMPTS": "5",
		}
		if plan.redisTimeout != "" {
			o.ServerEnv["OTP_REDIS_TIMEOUT"] = plan.redisTimeout
		}
		e, err := loadtest.SetUp(ctx, o, getenv, stderr)
		if err != nil {
			return nil, err
		}
		r, err := simulateRun(ctx, e, plan, run)
		e.TearDown()
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", run.kase, run.mode, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// caseNames lists the cases in the order the report shows them.
func caseNames() []string {
	return []string{caseFresh, caseEstablished, caseSurge, caseSlow, caseConverting, caseHopping, caseProxies, caseOffice, caseLaunch, caseSolver, caseCapped}
}
