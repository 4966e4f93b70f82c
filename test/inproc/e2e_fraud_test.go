package inproc

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
)

func TestFraudGuardEndToEnd(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_FRAUD_FLOOR_PREFIX": "3", "OTP_FRAUD_GUARD": "enforce",
	}))
	prefix := servertest.NewPrefix()

	t.Run("UnapprovedSendsTripThePrefix", func(t *testing.T) {
		for i := range 2 {
			servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(prefix, i), servertest.From(fmt.Sprintf("10.1.%d.1", i))...), http.StatusCreated, "")
		}
		r := servertest.Send(t, in, servertest.PrefixPhone(prefix, 2), servertest.From("10.1.2.1")...)
		servertest.WantStatus(t, r, http.StatusForbidden, "fraud_blocked")
		if ra := r.Num("retry_after_seconds"); ra < 43_000 || ra > 43_200 {
			t.Errorf("retry_after_seconds: got %v, want about 12h", ra)
		}
		if got := len(p.Received(servertest.PrefixPhone(prefix, 2))); got != 0 {
			t.Errorf("the refused send went out: %d messages", got)
		}
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(prefix, 3), servertest.From("10.1.3.1")...), http.StatusForbidden, "fraud_blocked")
		// Another prefix is not affected.
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(servertest.NewPrefix(), 0), servertest.From("10.1.4.1")...), http.StatusCreated, "")
	})

	var blockID string
	t.Run("TheBlockIsARowAndTheHistorySaysWhy", func(t *testing.T) {
		r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/fraud/blocks", "")
		blocks, _ := r.Body["blocks"].([]any)
		if r.Status != 200 || len(blocks) != 1 {
			t.Fatalf("got %d %s, want one block", r.Status, r.Raw)
		}
		b := blocks[0].(map[string]any)
		if b["scope"] != "prefix" || b["target"] != prefix || b["mode"] != "enforce" {
			t.Errorf("got %v, want the prefix %s", b, prefix)
		}
		blockID, _ = b["id"].(string)
		deadline := time.Now().Add(10 * time.Second)
		for {
			r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?status=blocked&phone="+url.QueryEscape(servertest.PrefixPhone(prefix, 3)), "")
			if strings.Contains(r.Raw, `"reason":"fraud_guard prefix `+prefix+`"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("history never showed the guard's reason: %s", r.Raw)
			}
			time.Sleep(50 * time.Millisecond)
		}
		actions := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/fraud/config", "")
		if actions.Status != 200 {
			t.Errorf("config: %d", actions.Status)
		}
	})

	t.Run("MetricsCountTheDecisionsAndTheBlock", func(t *testing.T) {
		body := scrapeMetrics(t, in)
		for _, want := range []string{
			`otpgate_fraud_blocks_started_total{mode="enforce",scope="prefix"} 1`,
			`otpgate_fraud_decisions_total{mode="enforce",result="refused",scope="prefix"} 2`,
			`otpgate_fraud_decisions_total{mode="enforce",result="allowed",scope="country"}`,
			`otpgate_sends_total{outcome="fraud_blocked"} 2`,
			`otpgate_fraud_shadow_total{scope="prefix"} 0`,
			`otpgate_fraud_blocks_active{mode="enforce",scope="prefix"} 1`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %q:\n%s", want, grep(body, "otpgate_fraud"))
			}
		}
	})

	t.Run("ALiftEndsTheBlock", func(t *testing.T) {
		if r := servertest.AdminCall(t, in, http.MethodDelete, "/admin/api/fraud/blocks/"+blockID, ""); r.Status != http.StatusOK {
			t.Fatalf("lift: got %d %s", r.Status, r.Raw)
		}
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(prefix, 4), servertest.From("10.1.5.1")...), http.StatusCreated, "")
	})

	t.Run("ApprovedSendsNeverTrip", func(t *testing.T) {
		clean := servertest.NewPrefix()
		for i := range 8 {
			phone := servertest.PrefixPhone(clean, i)
			servertest.WantStatus(t, servertest.Send(t, in, phone, servertest.From(fmt.Sprintf("10.2.%d.1", i))...), http.StatusCreated, "")
			servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": servertest.LastCode(t, p, phone)}, servertest.From(fmt.Sprintf("10.2.%d.1", i))...), http.StatusOK, "")
		}
	})

	t.Run("TheBlockListAnswersBlocked", func(t *testing.T) {
		listed := servertest.NewPrefix()
		r := servertest.AdminCall(t, in, http.MethodPost, "/admin/api/fraud/lists", `{"list":"block","value":"`+listed+`"}`)
		if r.Status != http.StatusCreated || r.Str("kind") != "prefix" {
			t.Fatalf("add: got %d %s", r.Status, r.Raw)
		}
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(listed, 1), servertest.From("10.3.0.1")...), http.StatusForbidden, "blocked")
	})

	t.Run("TheSafeListSkipsTheGuardOnly", func(t *testing.T) {
		safe := servertest.NewPrefix()
		if r := servertest.AdminCall(t, in, http.MethodPost, "/admin/api/fraud/lists", `{"list":"safe","value":"`+safe+`"}`); r.Status != http.StatusCreated {
			t.Fatalf("add: got %d %s", r.Status, r.Raw)
		}
		for i := range 5 {
			servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(safe, i), servertest.From(fmt.Sprintf("10.4.%d.1", i))...), http.StatusCreated, "")
		}
		// The phone rule still holds.
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(safe, 0), servertest.From("10.4.9.1")...), http.StatusTooManyRequests, "rate_limited")
	})

	t.Run("ShadowRefusesNothingAndRecordsWhatItWouldHave", func(t *testing.T) {
		if r := servertest.AdminCall(t, in, http.MethodPut, "/admin/api/fraud/config", `{"fraud_guard":"shadow","limit_prefix":"2/1h:shadow"}`); r.Status != 200 {
			t.Fatalf("PUT: got %d %s", r.Status, r.Raw)
		}
		shadowed := servertest.NewPrefix()
		for i := range 5 {
			servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(shadowed, i), servertest.From(fmt.Sprintf("10.5.%d.1", i))...), http.StatusCreated, "")
		}
		r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?phone="+url.QueryEscape(servertest.PrefixPhone(shadowed, 4)), "")
		if !strings.Contains(r.Raw, "prefix 2/1h:shadow") {
			t.Errorf("history: got %s, want the shadow rule on the send", r.Raw)
		}
		body := scrapeMetrics(t, in)
		if !strings.Contains(body, `otpgate_fraud_shadow_total{scope="prefix"} 3`) ||
			!strings.Contains(body, `otpgate_fraud_blocks_started_total{mode="shadow",scope="prefix"} 1`) {
			t.Errorf("metrics:\n%s", grep(body, "otpgate_fraud"))
		}
	})

	t.Run("StaticRulesAreRateLimitsNamingTheScope", func(t *testing.T) {
		if r := servertest.AdminCall(t, in, http.MethodPut, "/admin/api/fraud/config", `{"fraud_guard":"off","limit_prefix":"2/1h"}`); r.Status != 200 {
			t.Fatalf("PUT: got %d %s", r.Status, r.Raw)
		}
		limited := servertest.NewPrefix()
		for i := range 2 {
			servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(limited, i), servertest.From(fmt.Sprintf("10.6.%d.1", i))...), http.StatusCreated, "")
		}
		r := servertest.Send(t, in, servertest.PrefixPhone(limited, 2), servertest.From("10.6.2.1")...)
		servertest.WantStatus(t, r, http.StatusTooManyRequests, "rate_limited")
		vs, _ := r.Body["violations"].([]any)
		if len(vs) != 1 || vs[0].(map[string]any)["scope"] != "prefix" {
			t.Errorf("violations: got %s, want the prefix", r.Raw)
		}
	})
}

// TestFraudConfigReachesEveryInstance changes the fraud configuration on one of three
// instances and measures when each of the others applies it: by its applied version and by
// what it answers. The bound is the contract's 2 seconds.
func TestFraudConfigReachesEveryInstance(t *testing.T) {
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_TRUSTED_PROXIES": "127.0.0.1/32"})
	var ins []*servertest.Instance
	for range 3 {
		ins = append(ins, servertest.Start(t, env))
	}
	listed := servertest.NewPrefix()
	for round, change := range []struct{ method, path, body string }{
		{http.MethodPut, "/admin/api/fraud/config", `{"fraud_guard":"shadow"}`},
		{http.MethodPost, "/admin/api/fraud/lists", `{"list":"block","value":"` + listed + `"}`},
	} {
		start := time.Now()
		r := servertest.AdminCall(t, ins[0], change.method, change.path, change.body)
		if r.Status/100 != 2 {
			t.Fatalf("change %d: got %d %s", round, r.Status, r.Raw)
		}
		want := float64(round + 1)
		for i, in := range ins {
			for {
				c := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/fraud/config", "")
				if c.Num("applied_version") == want {
					t.Logf("change %d: instance %d applied it after %v", round, i, time.Since(start).Round(time.Millisecond))
					break
				}
				if time.Since(start) > 2*time.Second {
					t.Fatalf("change %d: instance %d still applies version %v after 2s, want %v", round, i, c.Num("applied_version"), want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	for i, in := range ins {
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(listed, i), servertest.From(fmt.Sprintf("10.9.%d.1", i))...), http.StatusForbidden, "blocked")
	}
}
