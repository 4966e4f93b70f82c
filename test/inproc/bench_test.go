package inproc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/fixture"
)

// BenchmarkHTTPSend drives POST /v1/verifications of one production-mode server
// (real Redis, real Postgres, a webhook provider that answers at once) with 64
// concurrent clients for a fixed time per mix, and reports both mixes in one run:
// (a) distinct phones and IPs, all allowed; (b) a flood for one phone, all denied.
// OTPGATE_BENCH_DURATION sets the time per mix (default 5s). With OTPGATE_BENCH_WEBHOOK=1
// the default app has a webhook endpoint that takes every event type, and the server
// delivers them to a receiver meanwhile; with OTPGATE_BENCH_WEBHOOK=written the events are
// written but the dispatcher sleeps through the run (the cost of the writes alone).
func BenchmarkHTTPSend(b *testing.B) {
	dur := 5 * time.Second
	if s := os.Getenv("OTPGATE_BENCH_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("OTPGATE_BENCH_DURATION: %v", err)
		}
		dur = d
	}
	const clients = 64
	p := servertest.NewProvider(b)
	env := servertest.ProdEnv(b, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32",
		"OTP_LIMIT_PHONE":     "1/1m", "OTP_LIMIT_IP": "1000000/1h",
		"OTP_LOG_LEVEL": "error",
		// Sends that are never approved, from few networks: the fraud guard would rightly stop them.
		"OTP_FRAUD_GUARD": "off",
	})
	mode := os.Getenv("OTPGATE_BENCH_WEBHOOK")
	if mode == "written" {
		env["OTP_EVENTS_POLL_INTERVAL"] = "1h" // the dispatcher finds nothing at start, then sleeps
	}
	in := servertest.Start(b, env)
	var rc *eventstest.Receiver
	if mode == "1" || mode == "written" {
		rc = eventstest.New(b, servertest.HookSecret)
		addHook(b, hookClient(b), in, "default", rc.URL, events.Types()...)
	}
	pool, err := pgxpool.New(context.Background(), env["DATABASE_URL"])
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}

	var seq atomic.Int64
	base := time.Now().UnixNano() % 1_000_000
	allowed := func() (string, string) {
		n := seq.Add(1)
		return servertest.PhoneFor(int(base + n)), fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
	}
	flood := servertest.PhoneFor(int(base) + 5_000_000)
	denied := func() (string, string) {
		n := seq.Add(1)
		return flood, fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
	}

	b.ResetTimer()
	for range b.N {
		a := loadSends(hc, in.API, clients, dur, allowed)
		txBefore := commits(b, pool)
		rowsBefore := countRows(b, env["DATABASE_URL"], `SELECT count(*) FROM sends WHERE status IN ('blocked','duplicate')`)
		d := loadSends(hc, in.API, clients, dur, denied)
		time.Sleep(time.Second) // let the history writer flush and the stats settle
		rows := countRows(b, env["DATABASE_URL"], `SELECT count(*) FROM sends WHERE status IN ('blocked','duplicate')`) - rowsBefore
		tx := commits(b, pool) - txBefore

		// The flood's first request is admitted; anything but 201/409/429 (a 503 from an
		// overloaded machine, say) is reported, and fails the run beyond 1%.
		errs := a.other + d.other
		if a.ok == 0 || d.refused == 0 || d.ok > 1 || errs*100 > a.ok+d.refused {
			b.Fatalf("unexpected outcomes: allowed mix %d ok %d refused %d other; denied mix %d ok %d refused %d other",
				a.ok, a.refused, a.other, d.ok, d.refused, d.other)
		}
		b.ReportMetric(a.rate(), "allowed_req/s")
		b.ReportMetric(ms(a.p(0.99)), "allowed_p99_ms")
		b.ReportMetric(d.rate(), "denied_req/s")
		b.ReportMetric(ms(d.p(0.99)), "denied_p99_ms")
		b.ReportMetric(d.rate()/a.rate(), "denied/allowed")
		b.ReportMetric(float64(rows)/float64(d.refused), "pg_rows/denied")
		b.ReportMetric(float64(tx)/float64(d.refused), "pg_tx/denied")
		b.ReportMetric(float64(errs), "errors")
		b.Logf("(a) allowed: %d in %s = %.0f req/s, p50 %.1fms p99 %.1fms", a.ok, a.took.Round(time.Millisecond), a.rate(), ms(a.p(0.5)), ms(a.p(0.99)))
		b.Logf("(b) denied:  %d in %s = %.0f req/s, p50 %.1fms p99 %.1fms; %.2f× (a) (target ≥ 5×)", d.refused, d.took.Round(time.Millisecond), d.rate(), ms(d.p(0.5)), ms(d.p(0.99)), d.rate()/a.rate())
		b.Logf("    Postgres: %d history rows for %d denied requests (%.3f rows/request) in %d transactions (%.4f per request)", rows, d.refused, float64(rows)/float64(d.refused), tx, float64(tx)/float64(d.refused))
		if rc != nil {
			ev := countRows(b, env["DATABASE_URL"], `SELECT count(*) FROM event_outbox`)
			b.ReportMetric(float64(ev)/float64(a.ok+d.refused), "events/req")
			b.Logf("    events: %d written, %d received by the endpoint so far", ev, len(rc.Events()))
		}
	}
}

// loadResult is what one mix of a load run produced.
type loadResult struct {
	ok, refused, other int
	took               time.Duration
	lat                []time.Duration
}

func (r loadResult) rate() float64 { return float64(r.ok+r.refused) / r.took.Seconds() }

func (r loadResult) p(q float64) time.Duration { return fixture.Quantile(r.lat, q) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadSends runs clients goroutines that each send as fast as they can for dur.
func loadSends(hc *http.Client, api string, clients int, dur time.Duration, next func() (phone, ip string)) loadResult {
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(dur)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local loadResult
			for time.Now().Before(stop) {
				phone, ip := next()
				req, _ := http.NewRequest(http.MethodPost, api+"/v1/verifications", bytes.NewBufferString(`{"phone":"`+phone+`"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Forwarded-For", ip)
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					local.other++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				local.lat = append(local.lat, time.Since(t0))
				switch resp.StatusCode {
				case http.StatusCreated:
					local.ok++
				case http.StatusTooManyRequests, http.StatusConflict:
					local.refused++
				default:
					local.other++
				}
			}
			mu.Lock()
			res.ok += local.ok
			res.refused += local.refused
			res.other += local.other
			res.lat = append(res.lat, local.lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.took = time.Since(start)
	slices.Sort(res.lat)
	return res
}

// commits is the database's committed transaction count so far.
func commits(tb testing.TB, pool *pgxpool.Pool) int64 {
	tb.Helper()
	// Statistics are flushed lazily; ask for a snapshot that includes recent activity.
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
