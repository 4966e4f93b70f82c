package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sim is one run's traffic.
type sim struct {
	e       *env
	hc      *http.Client
	plan    pumpingPlan
	numbers *numbers
	addrs   *addresses
	wg      sync.WaitGroup

	attackStart                                         time.Time
	attackSent, attackDelivered                         atomic.Int64
	lastDelivery                                        atomic.Int64 // ns after attackStart
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.e.systems[0].targets[0]+path, bytes.NewReader(raw))
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
	if len(s.e.systems[0].procs) == 0 {
		return errors.New("no admin listener to read the metrics from")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.e.systems[0].procs[0].Admin+"/metrics", nil)
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
