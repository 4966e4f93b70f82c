package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"otpgate/internal/testenv/fixture"
)

// call is one send request to make.
type call struct {
	srv   *server
	phone string
	ip    string // sent as X-Forwarded-For; the servers trust the loopback proxy
	reqID string // sent as X-Request-Id, which the access log repeats
}

// outcome is what one call got.
type outcome struct {
	call
	start, end time.Time
	// err is a transport failure: no response, or a response cut short.
	err error
	// gotHeaders tells whether the response had started when err happened.
	gotHeaders bool
	status     int
	// invalid says what is wrong with a complete response that is not what the API promises.
	invalid    string
	code       string // problem code of an error response
	id         string // verification id of a 2xx response
	violations []violation
}

// violation is one entry of a 429's violations.
type violation struct {
	Scope  string `json:"scope"`
	Limit  int    `json:"limit"`
	Window int    `json:"window_seconds"`
}

func (o outcome) latency() time.Duration { return o.end.Sub(o.start) }

// newClient returns an HTTP client for load; without keep-alive every request has its own
// connection, so a refused connection and an accepted request are never confused.
//
// Idle connections are closed after a second. The server gives a new connection
// ReadHeaderTimeout (5s) for its first request, and a client that dials more connections
// than it ends up using parks the spare ones; without the short idle timeout one of them may
// be taken up just as the server closes it, and the POST fails with EOF. Clients of any
// HTTP server that times out idle connections have that race; this test is not about it.
func newClient(t testing.TB, keepAlive bool) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     time.Second,
		DisableKeepAlives:   !keepAlive,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// doSend makes one send and checks that a complete response is well-formed.
func doSend(ctx context.Context, client *http.Client, c call) (o outcome) {
	o = outcome{call: c, start: time.Now()}
	defer func() {
		if o.end.IsZero() {
			o.end = time.Now()
		}
	}()
	body, _ := json.Marshal(map[string]string{"phone": c.phone})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.srv.API+"/v1/verifications", bytes.NewReader(body))
	if err != nil {
		o.err = err
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	if c.ip != "" {
		req.Header.Set("X-Forwarded-For", c.ip)
	}
	if c.reqID != "" {
		req.Header.Set("X-Request-Id", c.reqID)
	}
	resp, err := client.Do(req)
	if err != nil {
		o.err = err
		return o
	}
	defer resp.Body.Close()
	o.gotHeaders, o.status = true, resp.StatusCode
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		o.err = fmt.Errorf("read body: %w", err)
		return o
	}
	o.end = time.Now()
	var b struct {
		ID         string          `json:"id"`
		Status     json.RawMessage `json:"status"` // "pending", or a problem's number
		Code       string          `json:"code"`
		Violations []violation     `json:"violations"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		o.invalid = fmt.Sprintf("body %q: %v", raw, err)
		return o
	}
	o.code, o.id, o.violations = b.Code, b.ID, b.Violations
	switch {
	case resp.StatusCode/100 == 2 && (b.ID == "" || string(b.Status) != `"pending"`):
		o.invalid = fmt.Sprintf("%d without id or pending status: %s", resp.StatusCode, raw)
	case resp.StatusCode >= 400 && b.Code == "":
		o.invalid = fmt.Sprintf("%d without problem code: %s", resp.StatusCode, raw)
	case resp.StatusCode == http.StatusTooManyRequests && b.Code == "rate_limited" && len(b.Violations) == 0:
		o.invalid = fmt.Sprintf("429 without violations: %s", raw)
	}
	return o
}

// runCalls makes the calls with at most conc in flight and returns their outcomes in order.
func runCalls(client *http.Client, calls []call, conc int) []outcome {
	out := make([]outcome, len(calls))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(conc, len(calls)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(calls) {
					return
				}
				out[i] = doSend(context.Background(), client, calls[i])
			}
		})
	}
	wg.Wait()
	return out
}

// loader keeps conc calls in flight, made by gen, until stopped.
type loader struct {
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu  sync.Mutex
	out []outcome
}

// startLoad starts a loader; gen makes the i-th call.
func startLoad(client *http.Client, conc int, gen func(i int) call) *loader {
	ctx, stop := context.WithCancel(context.Background())
	l := &loader{stop: stop}
	var next atomic.Int64
	for range conc {
		l.wg.Go(func() {
			for ctx.Err() == nil {
				o := doSend(context.Background(), client, gen(int(next.Add(1))-1))
				l.mu.Lock()
				l.out = append(l.out, o)
				l.mu.Unlock()
			}
		})
	}
	return l
}

// outcomes returns what finished so far.
func (l *loader) outcomes() []outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.out)
}

// finish stops starting calls, waits for those in flight and returns every outcome.
func (l *loader) finish() []outcome {
	l.stop()
	l.wg.Wait()
	return l.outcomes()
}

// waitUntil polls cond every 10ms until it holds or timeout passes.
func waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// statuses summarises outcomes as "201×50 409×200 err×1".
func statuses(outs []outcome) string {
	counts := map[string]int{}
	for _, o := range outs {
		switch {
		case o.err != nil:
			counts["err"]++
		default:
			counts[fmt.Sprint(o.status)]++
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s×%d ", k, counts[k])
	}
	return strings.TrimSpace(b.String())
}

// dist is a latency distribution.
type dist struct {
	n                       int
	min, p50, p95, p99, max time.Duration
}

func latencies(outs []outcome) dist {
	ds := make([]time.Duration, len(outs))
	for i, o := range outs {
		ds[i] = o.latency()
	}
	return distOf(ds)
}

func distOf(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	q := func(p float64) time.Duration { return fixture.Quantile(ds, p) }
	return dist{n: len(ds), min: ds[0], p50: q(.5), p95: q(.95), p99: q(.99), max: ds[len(ds)-1]}
}

func (d dist) String() string {
	r := func(x time.Duration) time.Duration { return x.Round(100 * time.Microsecond) }
	return fmt.Sprintf("n=%d min=%v p50=%v p95=%v p99=%v max=%v", d.n, r(d.min), r(d.p50), r(d.p95), r(d.p99), r(d.max))
}

// phone returns a valid Japanese mobile number for n; n picks it.
func phone(n int) string { return fmt.Sprintf("+81901%07d", n%10_000_000) }
