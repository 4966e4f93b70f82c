package inproc

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/fixture"
)

// TestFencedBudgetEndToEnd is docs/spend.md's fenced budget through the public API: under a
// global daily cap of 1.00 at 0.05 a send, the countries without approved history share 5 %
// of it (one send). A country whose users enter their codes earns a share of its own and
// gives the floor back; the young countries then get the one send, and the next is refused
// 429 budget_exceeded naming the country and its share, as the history's reason does.
func TestFencedBudgetEndToEnd(t *testing.T) {
	p := servertest.NewProvider(t)
	// The fence reads the guard's country hashes: the guard must be on.
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_FRAUD_GUARD": "enforce",
	}))
	r := servertest.AdminCall(t, in, http.MethodPut, "/admin/api/spend/config", `{"currency":"USD",`+
		`"prices":[{"channel":"sms","country":"*","price":"0.05"}],"budgets":[{"name":"cap","daily":"1.00","mode":"enforce"}]}`)
	if r.Status != http.StatusOK {
		t.Fatalf("PUT spend config: got %d %s", r.Status, r.Raw)
	}
	// Every instance reloads the spend settings within two seconds; this one at once.
	send := func(phone, ip string) servertest.Reply { return servertest.Send(t, in, phone, servertest.From(ip)...) }

	// JP's first user is young JP's: the floor's one send. The code entered (after the
	// guard's least plausible delay) earns JP a share, and its next send leaves the floor.
	jp := servertest.NewPhone()
	servertest.WantStatus(t, send(jp, "10.30.0.1"), http.StatusCreated, "")
	time.Sleep(time.Second)
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": jp, "code": servertest.LastCode(t, p, jp)}, servertest.From("10.30.0.1")...), http.StatusOK, "")
	servertest.WantStatus(t, send(servertest.NewPhone(), "10.30.0.2"), http.StatusCreated, "")

	// UZ and KG have no approved history: one send between them.
	servertest.WantStatus(t, send("+998901234567", "10.30.1.1"), http.StatusCreated, "")
	for _, tc := range []struct{ phone, ip, country string }{{"+998901234568", "10.30.1.2", "UZ"}, {"+996700123456", "10.30.1.3", "KG"}} {
		r := send(tc.phone, tc.ip)
		servertest.WantStatus(t, r, http.StatusTooManyRequests, "budget_exceeded")
		if r.Str("budget") != "cap" || r.Str("country") != tc.country || r.Str("share") != "0.05" || !strings.Contains(r.Str("detail"), tc.country) {
			t.Errorf("%s: got %s, want the cap, %s and the young countries' share 0.05 named", tc.phone, r.Raw, tc.country)
		}
		if got := len(p.Received(tc.phone)); got != 0 {
			t.Errorf("%s: got %d messages, want none", tc.phone, got)
		}
	}
	// JP keeps its share.
	servertest.WantStatus(t, send(servertest.NewPhone(), "10.30.0.3"), http.StatusCreated, "")

	// The refused send's history names the country and its share (the batch writer
	// writes refused sends a moment later).
	fixture.Eventually(t, "the history's reason naming UZ and its share", 10*time.Second, func() bool {
		r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?status=blocked&phone="+url.QueryEscape("+998901234568"), "")
		return strings.Contains(r.Raw, `"reason":"budget cap day country UZ share 0.05 (young countries)"`)
	})
}
