package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ObserveHTTP counts one public API request; it fits otphttp.Deps.Observe. route
// must be a route pattern (or a fixed word such as "unmatched"), never a raw path.
func (m *Metrics) ObserveHTTP(route string, status int, d time.Duration) {
	k := httpKey{route, status}
	v, ok := m.httpSeries.Load(k)
	if !ok {
		v = httpSeries{m.httpRequests.WithLabelValues(route, strconv.Itoa(status)), m.httpDuration.WithLabelValues(route)}
		m.httpSeries.Store(k, v)
	}
	s := v.(httpSeries)
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
}

// httpKey names the series of one route and status; both come from code, so they are few.
type httpKey struct {
	route  string
	status int
}

// httpSeries are the series one request of a route and status counts in.
type httpSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}
