package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// refRule is one sliding-window rule of the reference's policies.
type refRule struct {
	limit  int
	window time.Duration
}

// The policies both servers run with: loadgen configures otpgate with the same rules
// (serverEnv), so the two decide the same policies.
var (
	refDuplicate = []refRule{{1, 5 * time.Second}}
	refPerKey    = []refRule{{1, time.Minute}, {10, time.Hour}}
	refCheck     = []refRule{{1_000_000, time.Hour}}
)

// rulesEnv renders rules as otpgate's configuration reads them, such as "1/1m,10/1h".
func rulesEnv(rules []refRule) string {
	var parts []string
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%d/%s", r.limit, windowEnv(r.window)))
	}
	return strings.Join(parts, ",")
}

// windowEnv renders a window in its largest whole unit, such as "1h" or "5s".
func windowEnv(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
