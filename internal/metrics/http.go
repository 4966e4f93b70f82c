package metrics

import (
	"strconv"
	"time"
)

// ObserveHTTP counts one public API request; it fits otphttp.Deps.Observe. route
// must be a route pattern (or a fixed word such as "unmatched"), never a raw path.
func (m *Metrics) ObserveHTTP(route string, status int, d time.Duration) {
	m.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(d.Seconds())
}
