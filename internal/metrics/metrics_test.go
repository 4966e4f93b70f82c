package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// find returns the gathered metric called name whose labels include all of labels
// (pairs of name and value), or nil.
func find(t *testing.T, m *Metrics, name string, labels ...string) *dto.Metric {
	t.Helper()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, mt := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range mt.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue next
				}
			}
			return mt
		}
	}
	return nil
}

// counter is the value of a counter or gauge; 0 when the series does not exist.
func counter(t *testing.T, m *Metrics, name string, labels ...string) float64 {
	t.Helper()
	mt := find(t, m, name, labels...)
	switch {
	case mt == nil:
		return 0
	case mt.Counter != nil:
		return mt.Counter.GetValue()
	case mt.Gauge != nil:
		return mt.Gauge.GetValue()
	}
	t.Fatalf("%s is neither a counter nor a gauge", name)
	return 0
}

// observations is how many samples a histogram holds; 0 when the series does not exist.
func observations(t *testing.T, m *Metrics, name string, labels ...string) uint64 {
	t.Helper()
	mt := find(t, m, name, labels...)
	if mt == nil {
		return 0
	}
	if mt.Histogram == nil {
		t.Fatalf("%s is not a histogram", name)
	}
	return mt.Histogram.GetSampleCount()
}

// scrape fetches the exposition from Handler.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: got status %d, want 200; body %s", resp.StatusCode, body)
	}
	return string(body)
}

func TestMetricsHandler(t *testing.T) {
	t.Run("ServesOwnAndStandardMetrics", func(t *testing.T) {
		m := New()
		m.History(func() int { return 3 }, func() uint64 { return 2 }, func() uint64 { return 1 })
		body := scrape(t, m)
		for _, want := range []string{
			`otpgate_sends_total{outcome="created"} 0`,
			`otpgate_checks_total{outcome="approved"} 0`,
			`otpgate_limiter_decisions_total{result="error"} 0`,
			"otpgate_history_queue_depth 3",
			"otpgate_history_dropped_total 2",
			"otpgate_history_written_total 1",
			"go_goroutines ",
			"process_cpu_seconds_total ",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("scrape lacks %q", want)
			}
		}
	})
	t.Run("EachMetricsHasItsOwnRegistry", func(t *testing.T) {
		a, b := New(), New()
		a.ObserveHTTP("/healthz", 200, 0)
		if got := counter(t, a, "otpgate_http_requests_total", "route", "/healthz"); got != 1 {
			t.Errorf("first: got %v, want 1", got)
		}
		if got := counter(t, b, "otpgate_http_requests_total", "route", "/healthz"); got != 0 {
			t.Errorf("second: got %v, want 0", got)
		}
	})
}
