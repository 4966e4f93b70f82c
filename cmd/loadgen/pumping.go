package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The pumping simulation drives the real binary with legitimate background traffic — many
// countries and networks, approval rates of 60 to 95 %, each code checked a few seconds
// after its send — and, in the attacked cases, SMS pumping: a few narrow prefixes of two
// countries, thousands of rotating addresses over several /16s, never approved. It compresses
// the guard's horizons through its configuration, so that hour-long baselines fit into a
// couple of minutes, and runs each case with the guard off, in shadow and enforcing.

// pumpingOptions are the flags of -scenario pumping.
type pumpingOptions struct {
	short        bool
	cases, modes string
}

func (p *pumpingOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&p.short, "short", false, "pumping: the short version, about a minute in all, as make test runs it")
	fs.StringVar(&p.cases, "cases", "fresh,established,surge", "pumping: cases to run")
	fs.StringVar(&p.modes, "modes", "off,shadow,enforce", "pumping: fraud guard modes to run each case in")
}

// pumpingPlan sizes a simulation.
type pumpingPlan struct {
	// legitRate is the background's sends per second; surgeFactor multiplies it in the surge.
	legitRate, surgeFactor float64
	// attackRate is the attacker's sends per second, from attackIPs rotating addresses into
	// the prefixes (region and count) of attackPrefixes.
	attackRate     float64
	attackIPs      int
	attackPrefixes []attackTarget
	// warmup is the legitimate traffic before an established install's attack or surge;
	// attack and surge are how long those last.
	warmup, attack, surge time.Duration
	// A legitimate user checks between checkMin and checkMax after the send.
	checkMin, checkMax time.Duration
	// shortHorizon and longHorizon compress the guard's 10m and 7d.
	shortHorizon, longHorizon string
}

// attackTarget is a number of prefixes of one country that the attacker pumps.
type attackTarget struct {
	region string
	n      int
}

// Plans of the full simulation and of its short version.
func fullPlan() pumpingPlan {
	return pumpingPlan{
		legitRate: 8, surgeFactor: 10, attackRate: 40, attackIPs: 2000,
		attackPrefixes: []attackTarget{{"GB", 2}, {"NG", 1}},
		warmup:         2 * time.Minute, attack: 90 * time.Second, surge: time.Minute,
		checkMin: time.Second, checkMax: 4 * time.Second,
		shortHorizon: "60s", longHorizon: "10m",
	}
}

func shortPlan() pumpingPlan {
	p := fullPlan()
	p.legitRate, p.warmup, p.attack, p.surge = 5, 8*time.Second, 8*time.Second, 8*time.Second
	p.checkMax = 3 * time.Second
	p.shortHorizon, p.longHorizon = "30s", "5m"
	return p
}

// prefixDrop is the servers' OTP_PREFIX_DROP, the default.
const prefixDrop = 4

// The cases.
const (
	caseFresh       = "fresh"
	caseEstablished = "established"
	caseSurge       = "surge"
)

var caseWhat = map[string]string{
	caseFresh:       "a fresh install attacked",
	caseEstablished: "an established install attacked",
	caseSurge:       "an established install, a legitimate 10× surge, no attack",
}

// pumpingRun is one case in one mode.
type pumpingRun struct{ kase, mode string }

// pumpResult is what one run measured.
type pumpResult struct {
	run pumpingRun
	// Attack: sends made, SMS delivered (answered 2xx), when the last one was delivered
	// after the attack began, and how its refusals were answered.
	attackSent, attackDelivered int64
	lastDelivery                time.Duration
	contained                   bool
	attackRefusals              map[string]int
	// Legitimate traffic: sends, refusals (by code), checks and approvals.
	legitSent, legitRefused, legitChecks, legitApproved int64
	legitRefusals                                      map[string]int
	// From the server's metrics: blocks started (enforcing and shadow) and sends flagged by
	// shadow rules or the shadow guard.
	blocks, shadowBlocks, shadowFlagged int
	blockedScopes                       string
}

// runPumping parses the pumping flags, runs every case in every mode and reports.
func runPumping(ctx context.Context, o options, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	plan := fullPlan()
	if o.pumping.short {
		plan = shortPlan()
	}
	var runs []pumpingRun
	for _, c := range strings.Split(o.pumping.cases, ",") {
		if _, ok := caseWhat[c]; !ok {
			return fmt.Errorf("-cases: unknown %q (want fresh, established, surge)", c)
		}
		for _, m := range strings.Split(o.pumping.modes, ",") {
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
	if o.out != "" && o.out != defaultOut {
		if err := rep.writeMarkdown(o.out); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "loadgen: wrote %s\n", o.out)
	}
	return nil
}

// defaultOut is the load report's file, which the pumping simulation does not overwrite.
const defaultOut = "docs/load-report.md"

// simulate runs each case and mode against a fresh server, database and key prefix.
func simulate(ctx context.Context, o options, plan pumpingPlan, runs []pumpingRun, getenv func(string) string, stderr io.Writer) ([]pumpResult, error) {
	if o.bin == "" {
		bin, remove, err := buildServer(ctx, stderr)
		if err != nil {
			return nil, err
		}
		defer remove()
		o.bin = bin
	}
	o.servers, o.targets = 1, nil
	var out []pumpResult
	for _, run := range runs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fmt.Fprintf(stderr, "loadgen: pumping: %s, guard %s\n", caseWhat[run.kase], run.mode)
		o.extra = map[string]string{
			"OTP_FRAUD_GUARD": run.mode, "OTP_FRAUD_SHORT_HORIZON": plan.shortHorizon, "OTP_FRAUD_LONG_HORIZON": plan.longHorizon,
			// The default phone and IP rules, as the issue measured; checks as loadgen's others.
			"OTP_LIMIT_IP": "1/1m,10/1h", "OTP_LIMIT_PHONE": "1/1m,10/1h", "OTP_MAX_ATTEMPTS": "5",
		}
		e, err := setUp(ctx, o, getenv, stderr)
		if err != nil {
			return nil, err
		}
		r, err := simulateRun(ctx, e, plan, run)
		e.tearDown()
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", run.kase, run.mode, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// sim is one run's traffic.
type sim struct {
	e       *env
	hc      *http.Client
	plan    pumpingPlan
	numbers *numbers
	addrs   *addresses
	wg      sync.WaitGroup

	attackStart                                        time.Time
	attackSent, attackDelivered                        atomic.Int64
	lastDelivery                                       atomic.Int64 // ns after attackStart
	legitSent, legitRefused, legitChecks, legitApproved atomic.Int64

	mu                            sync.Mutex
	attackRefusals, legitRefusals map[string]int
	errs                          []error
}

// simulateRun plays one case's timeline, waits for the last checks and reads the metrics.
func simulateRun(ctx context.Context, e *env, plan pumpingPlan, run pumpingRun) (pumpResult, error) {
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}
	defer tr.CloseIdleConnections()
	seed := mathrand.Uint64()
	s := &sim{e: e, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, plan: plan,
		numbers: newNumbers(seed), addrs: newAddresses(seed, plan.attackIPs),
		attackRefusals: map[string]int{}, legitRefusals: map[string]int{}}
	var prefixes []string
	for _, t := range plan.attackPrefixes {
		for range t.n {
			prefixes = append(prefixes, s.numbers.prefix(t.region, prefixDrop))
		}
	}
	start := time.Now()
	legit := func(from, until time.Duration, rate float64) {
		s.stream(ctx, start.Add(from), start.Add(until), rate, func(int) { s.legitUser(ctx) })
	}
	attack := func(from, until time.Duration) {
		s.attackStart = start.Add(from)
		s.stream(ctx, s.attackStart, start.Add(until), plan.attackRate, func(n int) {
			s.attacker(ctx, s.numbers.inPrefix(prefixes[n%len(prefixes)], prefixDrop), s.addrs.attacker(n))
		})
	}
	w, a, g := plan.warmup, plan.attack, plan.surge
	var streams sync.WaitGroup
	switch run.kase {
	case caseFresh:
		streams.Go(func() { legit(0, a, plan.legitRate) })
		streams.Go(func() { attack(0, a) })
	case caseEstablished:
		streams.Go(func() { legit(0, w+a, plan.legitRate) })
		streams.Go(func() { attack(w, w+a) })
	case caseSurge:
		streams.Go(func() { legit(0, w, plan.legitRate); legit(w, w+g, plan.legitRate*plan.surgeFactor) })
	}
	streams.Wait()
	s.wg.Wait() // every send answered and every check made
	if ctx.Err() != nil {
		return pumpResult{}, ctx.Err()
	}
	if len(s.errs) > 0 {
		return pumpResult{}, fmt.Errorf("%d requests failed, the first: %w", len(s.errs), s.errs[0])
	}
	r := pumpResult{
		run: run, attackSent: s.attackSent.Load(), attackDelivered: s.attackDelivered.Load(),
		lastDelivery: time.Duration(s.lastDelivery.Load()), attackRefusals: s.attackRefusals,
		legitSent: s.legitSent.Load(), legitRefused: s.legitRefused.Load(), legitChecks: s.legitChecks.Load(),
		legitApproved: s.legitApproved.Load(), legitRefusals: s.legitRefusals,
	}
	// Contained: nothing delivered in the attack's last fifth.
	r.contained = run.kase != caseSurge && r.lastDelivery < a*4/5
	if err := s.readMetrics(ctx, &r); err != nil {
		return pumpResult{}, err
	}
	return r, nil
}

// stream calls fire rate times a second from from until until, each in its own goroutine.
func (s *sim) stream(ctx context.Context, from, until time.Time, rate float64, fire func(n int)) {
	for n := 0; ; n++ {
		at := from.Add(time.Duration(float64(n) / rate * float64(time.Second)))
		if !at.Before(until) || ctx.Err() != nil {
			return
		}
		if d := time.Until(at); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		s.wg.Go(func() { fire(n) })
	}
}

// legitUser is one user: a code sent, and entered a few seconds later by most.
func (s *sim) legitUser(ctx context.Context) {
	c := pick(countries())
	phone, ip := s.numbers.random(c.region), s.addrs.legit()
	s.legitSent.Add(1)
	status, code, err := s.post(ctx, "/v1/verifications", map[string]string{"phone": phone}, ip)
	if err != nil {
		s.fail(err)
		return
	}
	if status/100 != 2 {
		s.legitRefused.Add(1)
		s.count(s.legitRefusals, code)
		return
	}
	if mathrand.Float64() >= c.approval {
		return // never enters the code
	}
	delay := s.plan.checkMin + time.Duration(mathrand.Int64N(int64(s.plan.checkMax-s.plan.checkMin)))
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	got := s.e.provider.LastCode(phone)
	s.legitChecks.Add(1)
	status, _, err = s.post(ctx, "/v1/verifications/check", map[string]string{"phone": phone, "code": got}, ip)
	if err != nil {
		s.fail(err)
		return
	}
	if status == http.StatusOK {
		s.legitApproved.Add(1)
	}
}

// attacker is one pumped send.
func (s *sim) attacker(ctx context.Context, phone, ip string) {
	s.attackSent.Add(1)
	status, code, err := s.post(ctx, "/v1/verifications", map[string]string{"phone": phone}, ip)
	if err != nil {
		s.fail(err)
		return
	}
	if status/100 != 2 {
		s.count(s.attackRefusals, code)
		return
	}
	s.attackDelivered.Add(1)
	since := int64(time.Since(s.attackStart))
	for {
		old := s.lastDelivery.Load()
		if since <= old || s.lastDelivery.CompareAndSwap(old, since) {
			return
		}
	}
}

func (s *sim) count(m map[string]int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m[code]++
}

func (s *sim) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// post sends a JSON body from the client ip and returns the status and the problem's code.
func (s *sim) post(ctx context.Context, path string, body map[string]string, ip string) (int, string, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.e.targets[0]+path, bytes.NewReader(raw))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var p struct{ Code string }
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	if resp.StatusCode/100 != 2 {
		if err := json.Unmarshal(data, &p); err != nil || p.Code == "" {
			return 0, "", fmt.Errorf("POST %s: %d without a problem code: %s", path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode, p.Code, nil
}

// readMetrics reads the blocks the guard started and the shadow findings from /metrics.
func (s *sim) readMetrics(ctx context.Context, r *pumpResult) error {
	if len(s.e.admins) == 0 {
		return errors.New("no admin listener to read the metrics from")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.e.admins[0]+"/metrics", nil)
	if err != nil {
		return err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	scopes := map[string]int{}
	for _, line := range strings.Split(string(body), "\n") {
		name, labels, value, ok := metricLine(line)
		if !ok {
			continue
		}
		switch name {
		case "otpgate_fraud_blocks_started_total":
			if strings.Contains(labels, `mode="shadow"`) {
				r.shadowBlocks += value
			} else {
				r.blocks += value
			}
			if value > 0 {
				scopes[labelValue(labels, "scope")] += value
			}
		case "otpgate_fraud_shadow_total":
			r.shadowFlagged += value
		}
	}
	var parts []string
	for _, sc := range []string{"country", "prefix", "ip_net"} {
		if n := scopes[sc]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", sc, n))
		}
	}
	r.blockedScopes = strings.Join(parts, " ")
	return nil
}

// metricLine splits a Prometheus text line such as `name{a="b"} 3`.
func metricLine(line string) (name, labels string, value int, ok bool) {
	if line == "" || line[0] == '#' {
		return "", "", 0, false
	}
	head, num, found := strings.Cut(line, " ")
	if !found {
		return "", "", 0, false
	}
	name, labels, _ = strings.Cut(head, "{")
	var f float64
	if _, err := fmt.Sscanf(num, "%g", &f); err != nil {
		return "", "", 0, false
	}
	return name, labels, int(f), true
}

// labelValue returns one label's value from `a="b",c="d"}`.
func labelValue(labels, name string) string {
	_, rest, ok := strings.Cut(labels, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// pick draws a country by weight.
func pick(cs []country) country {
	x := mathrand.Float64()
	for _, c := range cs {
		if x -= c.weight; x < 0 {
			return c
		}
	}
	return cs[len(cs)-1]
}
