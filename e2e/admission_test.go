package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/testenv"
)

// admission sizes one exactness run: every phone is asked for from every IP, reqs times
// in all, over three server processes with at most conc requests in flight.
type admission struct {
	phones, ips, reqs, conc int
}

func admissionSize() admission {
	if soak() {
		return admission{phones: 200, ips: 80, reqs: 80_000, conc: 300}
	}
	return admission{phones: 50, ips: 20, reqs: 5_000, conc: 200}
}

// The rules of the exactness runs. Their windows are longer than any run, so every request
// falls inside one window and the limits never free up during a run: what the rules allow
// is then a number, not a function of timing. Per IP the limit is 2, so 20 IPs admit 40 of
// the 50 phones: both rules bind, and the IP rule binds everywhere.
const (
	phoneLimit = 1
	ipLimit    = 2
)

var admissionEnv = map[string]string{
	"OTP_LIMIT_PHONE":      "1/10m,10/1h",
	"OTP_LIMIT_IP":         "2/10m",
	"OTP_DUPLICATE_WINDOW": "10m",
	"SMS_TIMEOUT":          "10s",
}

// TestAdmissionAcrossInstances sends from many clients to three server processes at once
// and checks that exactly what the rules allow was sent, counted three ways: the 201s, the
// SMS the provider received and the sent rows in Postgres.
func TestAdmissionAcrossInstances(t *testing.T) {
	t.Run("StandaloneRedis", func(t *testing.T) {
		runAdmission(t, testenv.RedisURL(t), true)
	})
	t.Run("RedisCluster", func(t *testing.T) {
		c := testenv.RedisCluster(t)
		runAdmission(t, "redis+cluster://"+strings.Join(c.Addrs, ","), false)
	})
}

// runAdmission runs one exactness test. A standalone Redis decides each request in one
// script call, so every refusal must name a rule that is full at the end. A cluster decides
// slot by slot and may refuse for a moment what it would admit (see ratelimit.Allow); there
// the test counts such refusals and then asks again, one request at a time, for every pair
// that both rules would still admit: each must be admitted, after which the totals must be
// exact too.
func runAdmission(t *testing.T, redisURL string, standalone bool) {
	sz := admissionSize()
	p := newProvider(t)
	dsn := testenv.PostgresDSN(t)
	servers := startServers(t, 3, prodEnv(t, redisURL, dsn, p, admissionEnv))
	client := newClient(t, true)

	ipOf := func(i int) string { return fmt.Sprintf("10.77.%d.%d", i/200, 1+i%200) }
	calls := make([]call, sz.reqs)
	for i, k := range rand.Perm(sz.reqs) {
		pair := k % (sz.phones * sz.ips)
		calls[i] = call{srv: servers[i%len(servers)], phone: phone(pair % sz.phones), ip: ipOf(pair / sz.phones)}
	}
	start := time.Now()
	outs := runCalls(client, calls, sz.conc)
	took := time.Since(start)
	t.Logf("%d sends over %d processes, %d in flight: %s in %v (%.0f req/s); latency %v",
		sz.reqs, len(servers), sz.conc, statuses(outs), took.Round(time.Millisecond), float64(sz.reqs)/took.Seconds(), latencies(outs))

	type pair struct{ phone, ip string }
	admitted := map[string]int{}   // per phone and per IP
	pairs := map[pair]bool{}       // admitted pairs
	requested := map[pair]int{}    // requests per pair
	ids := map[string]bool{}       // verification ids of the 201s
	var created, dups, limited int // 201, 409, 429
	for _, o := range outs {
		requested[pair{o.phone, o.ip}]++
		switch {
		case o.err != nil || o.invalid != "":
			t.Fatalf("%s %s from %s: got err %v, invalid %q", o.srv.name, o.phone, o.ip, o.err, o.invalid)
		case o.status == http.StatusCreated:
			created++
			admitted[o.phone]++
			admitted[o.ip]++
			pairs[pair{o.phone, o.ip}] = true
			ids[o.id] = true
		case o.status == http.StatusConflict && o.code == "duplicate_submit":
			dups++
		case o.status == http.StatusTooManyRequests && o.code == "rate_limited":
			limited++
		default:
			t.Fatalf("%s %s from %s: got %d %s, want 201, 409 duplicate_submit or 429 rate_limited", o.srv.name, o.phone, o.ip, o.status, o.code)
		}
	}

	t.Run("NoRuleIsExceeded", func(t *testing.T) {
		for ph := range sz.phones {
			if n := admitted[phone(ph)]; n > phoneLimit {
				t.Errorf("%s: got %d sends, want at most %d", phone(ph), n, phoneLimit)
			}
		}
		for ip := range sz.ips {
			if n := admitted[ipOf(ip)]; n > ipLimit {
				t.Errorf("%s: got %d sends, want at most %d", ipOf(ip), n, ipLimit)
			}
		}
	})
	t.Run("EveryRefusalNamesAFullRule", func(t *testing.T) {
		wrong := 0
		for _, o := range outs {
			switch o.status {
			case http.StatusConflict:
				if !pairs[pair{o.phone, o.ip}] {
					wrong++
					if standalone {
						t.Errorf("409 for %s from %s, which was never admitted", o.phone, o.ip)
					}
				}
			case http.StatusTooManyRequests:
				for _, v := range o.violations {
					var key string
					switch {
					case v.Scope == "phone" && v.Limit == phoneLimit && v.Window == 600:
						key = o.phone
					case v.Scope == "ip" && v.Limit == ipLimit && v.Window == 600:
						key = o.ip
					default:
						t.Errorf("429 for %s from %s names %+v, want phone 1/600s or ip 2/600s", o.phone, o.ip, v)
						continue
					}
					if admitted[key] < v.Limit {
						wrong++
						if standalone {
							t.Errorf("429 for %s from %s names %+v, but %s has %d sends", o.phone, o.ip, v, key, admitted[key])
						}
					}
				}
			}
		}
		t.Logf("refusals by a rule that is not full at the end (momentary; allowed on a cluster only): %d", wrong)
		if standalone {
			// Every admitted pair's other requests came after it (an earlier one would have
			// been admitted instead, or refused by a rule that stays full), so each was a
			// duplicate.
			want := 0
			for pr := range pairs {
				want += requested[pr] - 1
			}
			if dups != want {
				t.Errorf("got %d duplicates, want %d (every other request of an admitted pair)", dups, want)
			}
		}
	})

	// Ask once more, one at a time, for every pair that both rules still admit.
	swept := 0
	for ph := range sz.phones {
		for ip := range sz.ips {
			c := call{srv: servers[0], phone: phone(ph), ip: ipOf(ip)}
			if admitted[c.phone] >= phoneLimit || admitted[c.ip] >= ipLimit {
				continue
			}
			swept++
			o := doSend(t.Context(), client, c)
			if o.status != http.StatusCreated {
				t.Fatalf("sweep: %s from %s, which both rules admit: got %d %s %v", c.phone, c.ip, o.status, o.code, o.err)
			}
			created++
			admitted[c.phone]++
			admitted[c.ip]++
			ids[o.id] = true
		}
	}
	t.Logf("sweep: %d pairs admitted one at a time after the load", swept)
	if standalone && swept > 0 {
		t.Errorf("standalone: got %d pairs that both rules still admit after the load, want 0", swept)
	}

	t.Run("ExactlyWhatTheRulesAllow", func(t *testing.T) {
		want := min(sz.phones*phoneLimit, sz.ips*ipLimit)
		if created != want {
			t.Errorf("got %d sends in all, want %d = min(%d phones × %d, %d IPs × %d)", created, want, sz.phones, phoneLimit, sz.ips, ipLimit)
		}
		// All of the smaller budget is spent: with every phone asked for from every IP, a
		// phone left over and an IP left over would make a pair both rules admit.
		if sz.ips*ipLimit <= sz.phones*phoneLimit {
			for ip := range sz.ips {
				if got := admitted[ipOf(ip)]; got != ipLimit {
					t.Errorf("%s: got %d sends, want %d", ipOf(ip), got, ipLimit)
				}
			}
		}
		if sz.phones*phoneLimit <= sz.ips*ipLimit {
			for ph := range sz.phones {
				if got := admitted[phone(ph)]; got != phoneLimit {
					t.Errorf("%s: got %d sends, want %d", phone(ph), got, phoneLimit)
				}
			}
		}
	})

	t.Run("ProviderReceivedEverySMSOnce", func(t *testing.T) {
		got := p.PerPhone()
		for ph := range sz.phones {
			if n := got[phone(ph)]; n != admitted[phone(ph)] {
				t.Errorf("%s: provider received %d SMS, want %d (its 201s)", phone(ph), n, admitted[phone(ph)])
			}
		}
		if n := len(p.Received("")); n != created {
			t.Errorf("provider received %d SMS, want %d", n, created)
		}
	})

	// SIGTERM flushes the history writer, so the refused sends are in Postgres too.
	for _, s := range servers {
		s.Term()
	}
	for _, s := range servers {
		if err := s.Wait(30 * time.Second); err != nil {
			t.Errorf("%s: %v\n%s", s.name, err, s.logTail(20))
		}
	}
	t.Run("PostgresHasEverySend", func(t *testing.T) {
		sent := map[string]int{}
		byStatus := map[string]int{}
		for _, r := range sendRows(t, dsn) {
			byStatus[r.status] += r.n
			if r.status == "sent" {
				sent[r.phone] += r.n
				sent[r.ip] += r.n
			}
		}
		for k, n := range admitted {
			if sent[k] != n {
				t.Errorf("%s: got %d sent rows, want %d", k, sent[k], n)
			}
		}
		want := map[string]int{"sent": created, "duplicate": dups, "blocked": limited}
		for _, s := range []string{"sent", "duplicate", "blocked", "sending", "failed"} {
			if byStatus[s] != want[s] {
				t.Errorf("got %d %s rows, want %d", byStatus[s], s, want[s])
			}
		}
		rows := sentVerifications(t, dsn)
		for id := range ids {
			if !rows[id] {
				t.Errorf("201 for verification %s has no sent row", id)
			}
		}
	})
}
