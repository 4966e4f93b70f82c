//go:build unix

package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"otpgate/internal/server"
	"otpgate/internal/server/servertest"
)

// BenchmarkTracedSend measures what tracing costs on the send path: POST
// /v1/verifications served in process (no TCP between client and server) by a
// production-mode server on the real Redis and PostgreSQL, sending through the fake
// webhook provider, with tracing off (the no-op provider), sampling 1 % of traces, and
// recording every one. Recorded spans go through the batch processor to an exporter
// that drops them, so the figures are the instrumentation's and the SDK's cost, not a
// collector's. Two paths: "allowed" (a new number each time: script call, statements,
// provider attempt) and "denied" (one number over its limit: the script call alone).
func BenchmarkTracedSend(b *testing.B) {
	for _, tracing := range []struct {
		name string
		tp   func() oteltrace.TracerProvider
	}{
		{"off", func() oteltrace.TracerProvider { return noop.NewTracerProvider() }},
		{"sampled1pct", func() oteltrace.TracerProvider {
			return sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()),
				sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))))
		}},
		{"recording", func() oteltrace.TracerProvider {
			return sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		}},
	} {
		b.Run(tracing.name, func(b *testing.B) {
			h := benchHandler(b, tracing.tp())
			var seq atomic.Int64
			base := time.Now().UnixNano() % 1_000_000
			b.Run("allowed", func(b *testing.B) {
				defer reportCPU(b)()
				for b.Loop() {
					n := seq.Add(1)
					benchSend(b, h, servertest.PhoneFor(int(base+n)), fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255), http.StatusCreated)
				}
			})
			flood := servertest.PhoneFor(int(base) + 5_000_000)
			benchSend(b, h, flood, "10.255.0.1", http.StatusCreated)
			b.Run("denied", func(b *testing.B) {
				defer reportCPU(b)()
				for b.Loop() {
					n := seq.Add(1)
					benchSend(b, h, flood, fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255), http.StatusTooManyRequests)
				}
			})
		})
	}
}

// reportCPU reports the process's CPU time (user and system) per operation when the
// returned function runs: on a shared machine it moves far less than the wall time, and
// the server's side of the send path (the part tracing adds to) runs in this process.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchHandler builds a production-mode server's public handler and background loops
// over tp, as serve does, stopped at cleanup; the fake webhook provider gets the codes.
func benchHandler(b *testing.B, tp oteltrace.TracerProvider) http.Handler {
	b.Helper()
	env := servertest.ProdEnv(b, servertest.NewProvider(b), map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_LIMIT_PHONE": "1/1m", "OTP_LIMIT_IP": "1000000/1h",
		"OTP_DUPLICATE_WINDOW": "0", "OTP_LOG_LEVEL": "error",
	})
	return server.PublicHandler(b, env, tp)
}

// benchSend posts one send from ip and fails the benchmark on another status than want.
func benchSend(b *testing.B, h http.Handler, phone, ip string, want int) {
	req := httptest.NewRequest(http.MethodPost, "/v1/verifications", strings.NewReader(`{"phone":"`+phone+`"}`))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("send: got %d, want %d: %s", rec.Code, want, rec.Body.String())
	}
}
