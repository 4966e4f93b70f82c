package inproc

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
)

// BenchmarkHTTPSendBudgets measures what spend budgets cost the HTTP send paths: two
// production-mode servers, alike but for the spend configuration — one with two enforcing
// budgets that every send reserves its cost in (a global daily one and a monthly one for the
// numbers' country, with caps no run reaches), one with none — take turns in 4 slices each
// of (a) distinct phones and IPs, all allowed, then of (b) a flood for one phone, all denied,
// 64 concurrent clients, OTPGATE_BENCH_DURATION (default 4s) per server and mix. It reports
// req/s and p99 of each, and budgets/none per mix: 1 when budgets cost nothing.
func BenchmarkHTTPSendBudgets(b *testing.B) {
	dur := 4 * time.Second
	if s := os.Getenv("OTPGATE_BENCH_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("OTPGATE_BENCH_DURATION: %v", err)
		}
		dur = d
	}
	const clients, rounds = 64, 4
	p := servertest.NewProvider(b)
	start := func(budgets bool) *servertest.Instance {
		in := servertest.Start(b, servertest.ProdEnv(b, p, map[string]string{
			"OTP_TRUSTED_PROXIES": "127.0.0.1/32",
			"OTP_LIMIT_PHONE":     "1/1m", "OTP_LIMIT_IP": "1000000/1h",
			"OTP_LOG_LEVEL": "error",
		}))
		if budgets {
			r := servertest.AdminCall(b, in, http.MethodPut, "/admin/api/spend/config", `{"currency":"USD",`+
				`"prices":[{"channel":"sms","country":"*","price":"0.05"}],"budgets":[`+
				`{"name":"global-daily","daily":"1000000","mode":"enforce"},`+
				`{"name":"jp-monthly","country":"JP","monthly":"1000000","mode":"enforce"}]}`)
			if r.Status != http.StatusOK {
				b.Fatalf("PUT spend config: got %d %s", r.Status, r.Raw)
			}
		}
		return in
	}
	servers := []*servertest.Instance{start(false), start(true)}
	tr := &http.Transport{MaxIdleConns: 2 * clients, MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}

	var seq atomic.Int64
	base := time.Now().UnixNano() % 1_000_000
	ip := func(n int64) string { return fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255) }
	allowed := func() (string, string) {
		n := seq.Add(1)
		return servertest.PhoneFor(int(base + n)), ip(n)
	}
	floods := []string{servertest.PhoneFor(int(base) + 5_000_000), servertest.PhoneFor(int(base) + 6_000_000)}

	b.ResetTimer()
	for range b.N {
		var res [2][2]loadResult // [mix][server]
		for mix := range 2 {
			for slice := range rounds {
				for j := range servers {
					i := (slice + j) % len(servers) // each slice starts with the other server
					next := allowed
					if mix == 1 {
						next = func() (string, string) { return floods[i], ip(seq.Add(1)) }
					}
					r := loadSends(hc, servers[i].API, clients, dur/rounds, next)
					res[mix][i] = merge(res[mix][i], r)
				}
			}
		}
		for mix, name := range []string{"allowed", "denied"} {
			none, with := res[mix][0], res[mix][1]
			want := none.ok
			if mix == 1 {
				want = none.refused
			}
			if want == 0 || (none.other+with.other)*100 > none.ok+none.refused+with.ok+with.refused {
				b.Fatalf("%s: unexpected outcomes: none %d ok %d refused %d other; budgets %d ok %d refused %d other",
					name, none.ok, none.refused, none.other, with.ok, with.refused, with.other)
			}
			ratio := with.rate() / none.rate()
			b.ReportMetric(none.rate(), name+"_none_req/s")
			b.ReportMetric(with.rate(), name+"_budgets_req/s")
			b.ReportMetric(ratio, name+"_budgets/none")
			b.Logf("%s: none %.0f req/s (p99 %.1fms), two budgets %.0f req/s (p99 %.1fms): budgets/none %.2f",
				name, none.rate(), ms(none.p(0.99)), with.rate(), ms(with.p(0.99)), ratio)
		}
	}
}

// merge adds what one slice of a mix measured to what the earlier slices did.
func merge(a, b loadResult) loadResult {
	a.ok, a.refused, a.other, a.took = a.ok+b.ok, a.refused+b.refused, a.other+b.other, a.took+b.took
	a.lat = append(a.lat, b.lat...)
	slices.Sort(a.lat)
	return a
}
