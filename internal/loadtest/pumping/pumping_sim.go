package pumping

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"otpgate/internal/challenge"
	"otpgate/internal/contact"
	"otpgate/internal/loadtest"
	"otpgate/internal/otp"
	"otpgate/internal/proof"
	"otpgate/internal/spend"
)

// sim is one run's traffic.
type sim struct {
	e       *loadtest.Env
	hc      *http.Client
	plan    pumpingPlan
	numbers *numbers
	addrs   *addresses
	wg      sync.WaitGroup

	attackStart                                                             time.Time
	attackSent, attackDelivered, attackChecks, attackApproved, attackSolved atomic.Int64
	// attackCost is what the attacker's delivered SMS cost under the shipped price table,
	// in micro-units of its currency, one segment each.
	attackCost                                                           atomic.Int64
	prices                                                               *spend.Prices
	lastDelivery                                                         atomic.Int64 // ns after attackStart
	legitSent, legitRefused, legitChecks, legitApproved, legitChallenged atomic.Int64

	mu                            sync.Mutex
	attackRefusals, legitRefusals map[string]int
	// solving holds a mutex per prefix the solver is solving a challenge for.
	solving sync.Map
	errs    []error
}

// simulateRun plays one case's timeline, waits for the last checks and reads the metrics.
func simulateRun(ctx context.Context, e *loadtest.Env, plan pumpingPlan, run pumpingRun) (pumpResult, error) {
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}
	defer tr.CloseIdleConnections()
	seed := mathrand.Uint64()
	s := &sim{e: e, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, plan: plan, prices: spend.Compile(spend.DefaultTable()),
		numbers: newNumbers(seed), addrs: newAddresses(seed, plan.attackIPs),
		attackRefusals: map[string]int{}, legitRefusals: map[string]int{}}
	start := time.Now()
	legit := func(from, until time.Duration, rate float64) {
		s.stream(ctx, start.Add(from), start.Add(until), rate, func(int) { s.legitUser(ctx) })
	}
	w := plan.warmup
	switch run.kase {
	case caseFresh:
		w = 0
	case caseCapped:
		w = plan.capWarmup
	}
	atk, hasAttack := s.attackFor(run.kase)
	var capMicros int64
	if run.kase == caseCapped {
		var err error
		if capMicros, err = s.setCap(ctx, w+atk.duration); err != nil {
			return pumpResult{}, err
		}
	}
	var streams sync.WaitGroup
	switch run.kase {
	case caseSurge:
		streams.Go(func() { legit(0, w, plan.legitRate); legit(w, w+plan.surge, plan.legitRate*plan.surgeFactor) })
	case caseOffice:
		streams.Go(func() { legit(0, w+plan.slow, plan.legitRate) })
		streams.Go(func() { s.office(ctx, start.Add(w), start.Add(w+plan.slow)) })
	case caseLaunch:
		streams.Go(func() { legit(0, w+plan.slow, plan.legitRate) })
		streams.Go(func() {
			s.stream(ctx, start.Add(w), start.Add(w+plan.slow), plan.legitRate/4, func(int) {
				s.legitSend(ctx, s.numbers.random(launchRegion), s.addrs.legit(), 0.85)
			})
		})
	default:
		streams.Go(func() { legit(0, w+atk.duration, plan.legitRate) })
		streams.Go(func() {
			s.attackStart = start.Add(w)
			s.stream(ctx, s.attackStart, start.Add(w+atk.duration), atk.rate, func(n int) { s.attacker(ctx, atk, n) })
		})
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
		run: run, attackSent: s.attackSent.Load(), attackDelivered: s.attackDelivered.Load(), attackCost: s.attackCost.Load(),
		attackChecks: s.attackChecks.Load(), attackApproved: s.attackApproved.Load(), attackSolved: s.attackSolved.Load(), capMicros: capMicros,
		lastDelivery: time.Duration(s.lastDelivery.Load()), attackRefusals: s.attackRefusals,
		legitSent: s.legitSent.Load(), legitRefused: s.legitRefused.Load(), legitChecks: s.legitChecks.Load(),
		legitApproved: s.legitApproved.Load(), legitRefusals: s.legitRefusals, legitChallenged: s.legitChallenged.Load(),
	}
	// Contained: nothing delivered in the attack's last fifth.
	r.contained = hasAttack && r.lastDelivery < atk.duration*4/5
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
		if !sleepUntil(ctx, at) {
			return
		}
		s.wg.Go(func() { fire(n) })
	}
}

// sleepUntil waits until at; false when ctx ended first.
func sleepUntil(ctx context.Context, at time.Time) bool {
	if d := time.Until(at); d > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
		}
	}
	return true
}

// legitUser is one user of the background traffic.
func (s *sim) legitUser(ctx context.Context) {
	c := pick(countries())
	s.legitSend(ctx, s.numbers.random(c.region), s.addrs.legit(), c.approval)
}

// office runs the testers of an office until until, each at its own pace.
func (s *sim) office(ctx context.Context, from, until time.Time) {
	o := newOffice(s.numbers)
	var testers sync.WaitGroup
	for i := range o.phones {
		testers.Go(func() {
			at := from.Add(jitter(0, officePace))
			for at.Before(until) && sleepUntil(ctx, at) {
				s.legitSend(ctx, o.phones[i], o.ips[i], 0.9)
				at = at.Add(officePace + jitter(0, 5*time.Second))
			}
		})
	}
	testers.Wait()
}

// legitSend is one legitimate send: a code asked for (solving a challenge when one is
// asked, as a client with ALTCHA's widget does), and entered a few seconds later by the
// share approval of users.
func (s *sim) legitSend(ctx context.Context, phone, ip string, approval float64) {
	s.legitSent.Add(1)
	status, p, err := s.post(ctx, "/v1/verifications", map[string]string{"phone": phone}, ip)
	if err != nil {
		s.fail(err)
		return
	}
	if p.Challenge != nil {
		solution, ok := challenge.Solve(*p.Challenge)
		if !ok {
			s.fail(fmt.Errorf("a challenge of %s could not be solved", phone))
			return
		}
		s.legitChallenged.Add(1)
		status, p, err = s.post(ctx, "/v1/verifications", map[string]string{"phone": phone, "altcha": solution}, ip)
		if err != nil {
			s.fail(err)
			return
		}
	}
	if status/100 != 2 {
		s.legitRefused.Add(1)
		s.count(s.legitRefusals, p.Code)
		return
	}
	if mathrand.Float64() >= approval {
		return // never enters the code
	}
	if !sleepUntil(ctx, time.Now().Add(jitter(s.plan.checkMin, s.plan.checkMax))) {
		return
	}
	got := s.e.Provider.LastCode(phone)
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

// attacker is one pumped send, and the entered code of a converting attacker.
func (s *sim) attacker(ctx context.Context, atk attackShape, n int) {
	phone, ip := atk.phone(n), atk.addr(n)
	s.attackSent.Add(1)
	status, p, err := s.post(ctx, "/v1/verifications", map[string]string{"phone": phone}, ip)
	if err != nil {
		s.fail(err)
		return
	}
	if atk.solves {
		status, p, err = s.solveAll(ctx, phone, ip, status, p)
		if err != nil {
			s.fail(err)
			return
		}
	}
	if status/100 != 2 {
		s.count(s.attackRefusals, p.Code)
		return
	}
	s.attackDelivered.Add(1)
	if _, region, err := contact.NormalizePhone(phone, ""); err == nil {
		s.attackCost.Add(s.prices.Cost(otp.ChannelSMS, region, phone, "", 1))
	}
	since := int64(time.Since(s.attackStart))
	for {
		old := s.lastDelivery.Load()
		if since <= old || s.lastDelivery.CompareAndSwap(old, since) {
			break
		}
	}
	if atk.checkShare == 0 || mathrand.Float64() >= atk.checkShare {
		return
	}
	if !sleepUntil(ctx, time.Now().Add(jitter(atk.checkMin, atk.checkMax))) {
		return
	}
	s.attackChecks.Add(1)
	status, _, err = s.post(ctx, "/v1/verifications/check", map[string]string{"phone": phone, "code": s.e.Provider.LastCode(phone)}, ip)
	if err != nil {
		s.fail(err)
		return
	}
	if status == http.StatusOK {
		s.attackApproved.Add(1)
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

// answer is what the simulation reads of an answer: a problem's code and challenge.
type answer struct {
	Code      string
	Challenge *proof.Challenge
}

// post sends a JSON body from the client ip and returns the status and the problem.
func (s *sim) post(ctx context.Context, path string, body map[string]string, ip string) (int, answer, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.e.Systems[0].Targets[0]+path, bytes.NewReader(raw))
	if err != nil {
		return 0, answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, answer{}, err
	}
	defer resp.Body.Close()
	var p struct {
		Code      string
		Challenge *struct {
			Algorithm, Challenge, Salt, Signature string
			MaxNumber                             int `json:"maxnumber"`
		}
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, answer{}, err
	}
	var a answer
	if resp.StatusCode/100 != 2 {
		if err := json.Unmarshal(data, &p); err != nil || p.Code == "" {
			return 0, answer{}, fmt.Errorf("POST %s: %d without a problem code: %s", path, resp.StatusCode, data)
		}
		a.Code = p.Code
		if c := p.Challenge; c != nil {
			a.Challenge = &proof.Challenge{Algorithm: c.Algorithm, Challenge: c.Challenge, MaxNumber: c.MaxNumber, Salt: c.Salt, Signature: c.Signature}
		}
	}
	return resp.StatusCode, a, nil
}
