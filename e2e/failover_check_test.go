package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// breaches collects what a run with OTP_REDIS_WAIT_REPLICAS on must never show. With it
// on each is a failure; with it off they are the price of the failover, reported.
type breaches struct {
	t       *testing.T
	waiting bool
	what    string
	found   []string
}

func (b *breaches) add(format string, args ...any) {
	b.t.Helper()
	if b.waiting {
		b.t.Errorf(format, args...)
		return
	}
	b.found = append(b.found, fmt.Sprintf(format, args...))
}

// report logs what a run without waiting saw.
func (b *breaches) report() {
	if b.waiting {
		return
	}
	if len(b.found) == 0 {
		b.t.Logf("WaitReplicas=0: no %s this time (the lost writes happened to be refusals)", b.what)
		return
	}
	shown := b.found[:min(len(b.found), 10)]
	more := ""
	if len(b.found) > len(shown) {
		more = fmt.Sprintf("\n  and %d more", len(b.found)-len(shown))
	}
	b.t.Logf("WaitReplicas=0: %d %s:\n  %s%s", len(b.found), b.what, strings.Join(shown, "\n  "), more)
}

// checkFailover checks the outcomes of a failover run against sms, the messages the
// provider received per phone.
func checkFailover(t *testing.T, servers []*server, sms map[string]int, outs []outcome, cycles []cycle, waiting bool) {
	admitted := map[string]int{} // 2xx per phone
	for _, o := range outs {
		if o.err == nil && o.status/100 == 2 {
			admitted[o.phone]++
		}
	}

	t.Run("EveryAnswerIsASendARefusalOr503", func(t *testing.T) {
		for _, o := range outs {
			ok := o.err == nil && o.invalid == "" && (o.status == http.StatusCreated || o.status == http.StatusOK ||
				(o.status == http.StatusTooManyRequests && o.code == "rate_limited") ||
				(o.status == http.StatusServiceUnavailable && o.code == "unavailable"))
			if !ok {
				t.Errorf("%s %s at %s: got %d %s (err %v, %s), want 201, 200, 429 rate_limited or 503 unavailable",
					o.srv.name, o.phone, o.start.Format(time.StampMilli), o.status, o.code, o.err, o.invalid)
			}
		}
	})

	t.Run("EverySMSAnswersAnAdmittedSend", func(t *testing.T) {
		for ph, n := range sms {
			if admitted[ph] != n {
				t.Errorf("%s: got %d SMS, want %d (its 200s and 201s)", ph, n, admitted[ph])
			}
		}
		for ph, n := range admitted {
			if sms[ph] == 0 {
				t.Errorf("%s: %d admitted sends but no SMS", ph, n)
			}
		}
	})

	t.Run("NothingAdmittedWhileCutOff", func(t *testing.T) {
		b := &breaches{t: t, waiting: waiting, what: "sends admitted by the master while it was cut off from its replica"}
		for _, o := range outs {
			for i, c := range cycles {
				if o.err == nil && o.status/100 == 2 && !o.start.Before(c.cut) && o.start.Before(c.killed) {
					b.add("failover %d: %s got %d at %s, after the cut at %s", i+1, o.phone, o.status,
						o.start.Format(time.StampMilli), c.cut.Format(time.StampMilli))
				}
			}
		}
		b.report()
	})

	t.Run("NoPhoneOverItsRules", func(t *testing.T) {
		b := &breaches{t: t, waiting: waiting, what: "phones with more sends than the rules allow"}
		extra := 0
		for _, ph := range sortedKeys(sms) {
			if n := sms[ph]; n > phoneRule {
				extra += n - phoneRule
				b.add("%s: got %d SMS, want at most %d (rule %d/1h, the run is shorter)", ph, n, phoneRule, phoneRule)
			}
		}
		b.report()
		if !waiting {
			t.Logf("WaitReplicas=0: %d sends beyond the rules in all", extra)
		}
	})

	t.Run("NoSMSWithoutARecordedReservation", func(t *testing.T) {
		// The new master must hold a reservation for every SMS: asked of the limiter, the
		// phone rule must count at least as many sends as were made. Every phone that got an
		// SMS from a send made around the failovers is asked.
		b := &breaches{t: t, waiting: waiting, what: "phones with SMS that the new master has no reservation for"}
		around := map[string]bool{}
		for _, o := range outs {
			if o.status/100 == 2 && !o.start.Before(cycles[0].cut.Add(-time.Second)) {
				around[o.phone] = true
			}
		}
		for _, c := range cycles {
			for _, ph := range c.late {
				around[ph] = true
			}
		}
		for _, ph := range sortedKeys(around) {
			if used := servers[0].phoneUsed(t, ph); used < sms[ph] {
				b.add("%s: got %d SMS, but the limiter holds %d", ph, sms[ph], used)
			}
		}
		b.report()
	})

	t.Run("RecoveredWithoutRestart", func(t *testing.T) {
		for _, s := range servers {
			if s.Exited() {
				t.Errorf("%s exited during the run", s.name)
			}
		}
		for i, c := range cycles {
			var failed int
			var first, last time.Time
			for _, o := range outs {
				if o.status == http.StatusServiceUnavailable && !o.start.Before(c.cut) && o.start.Before(c.recovered) {
					failed++
					if first.IsZero() || o.start.Before(first) {
						first = o.start
					}
					if o.start.After(last) {
						last = o.start
					}
				}
			}
			window := "none"
			if failed > 0 {
				window = fmt.Sprintf("started from %s to %s", first.Sub(c.cut).Round(time.Millisecond), last.Sub(c.cut).Round(time.Millisecond))
			}
			t.Logf("failover %d: %d sends failed closed (503) between the cut and the recovery (%s after the cut)", i+1, failed, window)
		}
	})
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
