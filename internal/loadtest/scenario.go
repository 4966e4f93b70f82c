package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// request is one request a scenario makes: a POST of body to path, from client ip.
type request struct {
	path string
	body []byte
	ip   string
	// answer, when set, is handed the answer's status and body.
	answer func(status int, body []byte)
}

// scenario is one kind of load.
type scenario struct {
	name, what string
	// want are the statuses the measured requests should get.
	want []int
	// target is the least share of the reference's requests per second otpgate should reach.
	target float64
	// prepare runs before the clock starts and returns the maker of the n-th request to s.
	prepare func(ctx context.Context, e *Env, s *System, o Options, hc *http.Client) (func(n int64) request, error)
}

func scenarios() []scenario {
	return []scenario{
		{"send-allowed", "sends for distinct numbers over many prefixes of five countries, from distinct clients over many networks, " +
			"all admitted, two in five requests approving an earlier send (one sent at least a second before, by its client, with its code)",
			[]int{http.StatusCreated, http.StatusOK}, 0.8, prepareAllowed},
		{"send-denied", "a flood of sends for one phone from distinct clients, all refused by the phone rule", []int{http.StatusTooManyRequests}, 0.8,
			func(ctx context.Context, _ *Env, s *System, _ Options, hc *http.Client) (func(int64) request, error) {
				target := s.shape.other(flood)
				if _, err := post(ctx, hc, s.Targets[0], sendRequest(target.phone, target.ip)); err != nil {
					return nil, err
				}
				return func(n int64) request { return sendRequest(target.phone, s.clientIP(2, n)) }, nil
			}},
		{"check", "wrong codes for pending verifications, within their attempt budget", []int{http.StatusUnprocessableEntity}, 0.9,
			prepareChecks},
	}
}

// ScenarioNames are the load scenarios, in the order a run takes them.
func ScenarioNames() []string {
	var names []string
	for _, s := range scenarios() {
		names = append(names, s.name)
	}
	return names
}

func scenarioByName(name string) (scenario, bool) {
	for _, s := range scenarios() {
		if s.name == name {
			return s, true
		}
	}
	return scenario{}, false
}

// prepareChecks creates a pool of verifications, several per client in flight, and guesses
// wrong for them in turn.
func prepareChecks(ctx context.Context, e *Env, s *System, o Options, hc *http.Client) (func(int64) request, error) {
	type pending struct{ id, wrong string }
	pool := make([]pending, max(4*o.Concurrency, 64))
	for i := range pool {
		tg := s.shape.other(int64(i))
		ph := tg.phone
		body, err := post(ctx, hc, s.Targets[i%len(s.Targets)], sendRequest(ph, tg.ip))
		if err != nil {
			return nil, err
		}
		var v struct{ ID string }
		if err := json.Unmarshal(body, &v); err != nil || v.ID == "" {
			return nil, fmt.Errorf("send for the check pool: got %s", body)
		}
		// With -targets the codes are unknown; a guess of zeros is then wrong but for one
		// chance in a million.
		wrong := "000000"
		if e.Provider != nil {
			code := e.Provider.LastCode(ph)
			if code == "" {
				return nil, fmt.Errorf("the provider got no code for %s", ph)
			}
			n, _ := strconv.Atoi(code)
			wrong = fmt.Sprintf("%0*d", len(code), (n+1)%pow10(len(code)))
		}
		pool[i] = pending{v.ID, wrong}
	}
	return func(n int64) request {
		p := pool[n%int64(len(pool))]
		body, _ := json.Marshal(map[string]string{"id": p.id, "code": p.wrong})
		return request{path: "/v1/verifications/check", body: body, ip: s.clientIP(3, -1-n%int64(o.Concurrency))}
	}, nil
}

// runScenario runs sc against every system: each is prepared, then the systems take turns in
// o.rounds slices of o.duration/o.rounds each (the first slice of each after o.warmup
// unmeasured), so that drift of a shared machine hits them alike. Each system's peak resident
// memory is taken over the whole scenario. It returns one result per system.
func runScenario(ctx context.Context, e *Env, sc scenario, o Options) ([]result, error) {
	type run struct {
		s    *System
		hc   *http.Client
		next func(int64) request
		seq  atomic.Int64
		res  result
	}
	runs := make([]*run, len(e.Systems))
	for i, s := range e.Systems {
		tr := &http.Transport{MaxIdleConns: o.Concurrency * 2, MaxIdleConnsPerHost: o.Concurrency * 2}
		defer tr.CloseIdleConnections()
		r := &run{s: s, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
		r.res = result{scenario: sc, system: s.name, statuses: map[int]int{}}
		next, err := sc.prepare(ctx, e, s, o, r.hc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		r.next = next
		resetPeakRSS(s.Procs)
		runs[i] = r
	}
	slice := o.Duration / time.Duration(o.Rounds)
	for round := range o.Rounds {
		for j := range runs {
			r := runs[(round+j)%len(runs)] // each round starts with another system
			warmup := time.Duration(0)
			if round == 0 {
				warmup = o.Warmup
			}
			profiled := func() error { return nil }
			if round == 0 {
				profiled = profileCPU(ctx, r.s, o.Profile, sc.name, warmup, slice)
			}
			measure(ctx, r.s, r.hc, r.next, &r.seq, o.Concurrency, warmup, slice, &r.res)
			if err := profiled(); err != nil {
				return nil, fmt.Errorf("%s: %w", r.s.name, err)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	out := make([]result, len(runs))
	for i, r := range runs {
		res := r.res
		res.peakRSS = peakRSS(r.s.Procs)
		slices.Sort(res.latencies)
		// A machine loaded by more than this run times a few calls out (503, as otpgate's
		// backing calls have 200 ms): they count, as the report's answers show, up to a tenth.
		bad := len(res.latencies)
		if t := res.statuses[http.StatusServiceUnavailable]; t*10 <= len(res.latencies) {
			bad -= t
		}
		for _, w := range sc.want {
			bad -= res.statuses[w]
		}
		if bad*100 > len(res.latencies) {
			return nil, fmt.Errorf("%s: %d of %d requests did not get %v (%s); is the setup right?", r.s.name, bad, len(res.latencies), sc.want, res.statusSummary())
		}
		out[i] = res
	}
	return out, nil
}

// measure runs next's requests against s with concurrency in flight for warmup unmeasured,
// then for d measured, and adds what it measured to res.
func measure(ctx context.Context, s *System, hc *http.Client, next func(int64) request, seq *atomic.Int64, concurrency int, warmup, d time.Duration, res *result) {
	start := time.Now()
	from, until := start.Add(warmup), start.Add(warmup+d)
	// The servers' CPU time is read when the measurement starts and when it ends.
	type cpus struct{ server, redis, postgres time.Duration }
	read := func() cpus {
		r, p := backendCPU()
		return cpus{cpuTime(s.Procs), r, p}
	}
	cpuAtStart := make(chan cpus, 1)
	go func() {
		time.Sleep(time.Until(from))
		cpuAtStart <- read()
	}()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Go(func() {
			var lat []time.Duration
			statuses := map[int]int{}
			errs := 0
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(until) {
					break
				}
				n := seq.Add(1)
				status, err := do(ctx, hc, s.Targets[(int(n)+w)%len(s.Targets)], next(n))
				if t0.Before(from) {
					continue
				}
				lat = append(lat, time.Since(t0))
				if err != nil {
					errs++
				} else {
					statuses[status]++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			res.latencies = append(res.latencies, lat...)
			for s, c := range statuses {
				res.statuses[s] += c
			}
			res.errors += errs
		})
	}
	wg.Wait()
	end, begin := read(), <-cpuAtStart
	res.cpu += end.server - begin.server
	res.redisCPU += end.redis - begin.redis
	res.postgresCPU += end.postgres - begin.postgres
	res.elapsed += d
}

// do makes one request and reads the whole answer.
func do(ctx context.Context, hc *http.Client, base string, r request) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", r.ip)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if r.answer != nil {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, err
		}
		r.answer(resp.StatusCode, body)
		return resp.StatusCode, nil
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// post makes a request during preparation and wants a 201.
func post(ctx context.Context, hc *http.Client, base string, r request) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", r.ip)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusCreated {
		return nil, fmt.Errorf("POST %s: got %d %s, want 201", r.path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return body, nil
}

func sendRequest(phone, ip string) request {
	body, _ := json.Marshal(map[string]string{"phone": phone})
	return request{path: "/v1/verifications", body: body, ip: ip}
}

// clientIP returns a distinct client address per n, in one quarter of 10.0.0.0/8 per
// scenario, so that the scenarios of one run do not spend each other's IP limits.
func (s *System) clientIP(scenario int, n int64) string {
	n = (s.base + n) & (1<<22 - 1)
	return fmt.Sprintf("10.%d.%d.%d", scenario%4*64+int(n>>16), n>>8&255, n&255)
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}
