package inproc

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
)

func TestAppsAndKeys(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_IP": "off"}))
	app := servertest.CreateApp(t, in, map[string]any{"name": "Shop", "access": "key", "code_length": 8, "send_rules": "5/1h"})
	_, secret := servertest.CreateKey(t, in, app, false)
	bearer := "Bearer " + secret

	t.Run("KeyAppRefusesCallsWithoutItsKeyAndSpendsNothing", func(t *testing.T) {
		phone := servertest.NewPhone()
		for name, headers := range map[string][]string{
			"Missing":    nil,
			"Wrong":      {"Authorization", "Bearer otpgateSK00000000000000000000000000000000" + strings.Repeat("0", 64)},
			"NotOtpgate": {"Authorization", "Bearer something"},
			"Basic":      {"Authorization", "Basic dXNlcjpwYXNz"},
		} {
			r := servertest.AppSend(t, in, app, phone, headers...)
			if r.Status != http.StatusUnauthorized || r.Str("code") != "unauthorized" || r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: got %d %s, want 401 unauthorized with a challenge", name, r.Status, r.Raw)
			}
		}
		if n := len(p.Received(phone)); n != 0 {
			t.Errorf("got %d messages, want none", n)
		}
		// Nothing was spent: the first real send of the phone is allowed by the 1/1m rule.
		servertest.WantStatus(t, servertest.AppSend(t, in, app, phone, "Authorization", bearer), http.StatusCreated, "")
	})

	t.Run("AppSettingsApplyAndVerificationsStayInTheirApp", func(t *testing.T) {
		phone := servertest.NewPhone()
		r := servertest.AppSend(t, in, app, phone, "Authorization", bearer)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		id := r.Str("id")
		code := servertest.LastCode(t, p, phone)
		if len(code) != 8 {
			t.Errorf("got code %q, want 8 digits (the app's code length)", code)
		}
		// No locale named: a Japanese number's message is in Japanese.
		if body := p.Received(phone)[0].Body; !strings.HasPrefix(body, "【Shop】認証コード") {
			t.Errorf("got message %q, want it in Japanese, starting with the app's name", body)
		}
		// The default app does not know the app's verification.
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"id": id, "code": code[:6]}), http.StatusNotFound, "not_found")
		r = servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications/check", map[string]string{"phone": phone, "code": code}, "Authorization", bearer)
		servertest.WantStatus(t, r, http.StatusOK, "")
		if r.Str("id") != id || r.Str("status") != "approved" {
			t.Errorf("got %s, want %s approved", r.Raw, id)
		}
	})

	t.Run("DefaultAppAnswersUnderItsAliasAndItsID", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.AppSend(t, in, "default", phone), http.StatusCreated, "")
		r := servertest.Post(t, in.API+"/v1/apps/00000000-0000-0000-0000-000000000001/verifications/check", map[string]string{"phone": phone, "code": servertest.LastCode(t, p, phone)})
		servertest.WantStatus(t, r, http.StatusOK, "")
		servertest.WantStatus(t, servertest.AppSend(t, in, "0190a000-0000-7000-8000-0000000000ff", phone), http.StatusNotFound, "not_found")
	})

	t.Run("TrustedKeyNamesTheClientIP", func(t *testing.T) {
		_, trusted := servertest.CreateKey(t, in, app, true)
		phone, other := servertest.NewPhone(), servertest.NewPhone()
		servertest.WantStatus(t, servertest.AppSend(t, in, app, phone, "Authorization", "Bearer "+trusted, "Otpgate-Client-Ip", "203.0.113.9"), http.StatusCreated, "")
		servertest.WantStatus(t, servertest.AppSend(t, in, app, other, "Authorization", bearer, "Otpgate-Client-Ip", "203.0.113.10"), http.StatusCreated, "")
		servertest.WantStatus(t, servertest.AppSend(t, in, app, servertest.NewPhone(), "Authorization", "Bearer "+trusted, "Otpgate-Client-Ip", "not-an-ip"), http.StatusBadRequest, "invalid_request")
		for ph, want := range map[string]string{phone: "203.0.113.9", other: "127.0.0.1"} {
			r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?phone="+url.QueryEscape(ph), nil)
			sends, _ := r.Body["sends"].([]any)
			if len(sends) != 1 || sends[0].(map[string]any)["client_ip"] != want {
				t.Errorf("sends of %s: got %s, want one from %s", ph, r.Raw, want)
			}
		}
	})

	t.Run("RevokedKeyIsRefused", func(t *testing.T) {
		kid, s := servertest.CreateKey(t, in, app, false)
		servertest.WantStatus(t, servertest.AppSend(t, in, app, servertest.NewPhone(), "Authorization", "Bearer "+s), http.StatusCreated, "")
		if r := servertest.AdminCall(t, in, http.MethodDelete, "/admin/api/apps/"+app+"/keys/"+kid, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: got %d %s, want 204", r.Status, r.Raw)
		}
		servertest.WantStatus(t, servertest.AppSend(t, in, app, servertest.NewPhone(), "Authorization", "Bearer "+s), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("HistoryAndStatsFilterByApp", func(t *testing.T) {
		r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?app="+app+"&limit=200", nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		sends, _ := r.Body["sends"].([]any)
		if len(sends) == 0 {
			t.Fatalf("got no sends of the app")
		}
		for _, s := range sends {
			if s.(map[string]any)["app_id"] != app {
				t.Errorf("got send %v, want only the app's", s)
			}
		}
		r = servertest.AdminCall(t, in, http.MethodGet, "/admin/api/stats?app="+app, nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		total := 0.0
		for _, b := range r.Body["buckets"].([]any) {
			total += b.(map[string]any)["sends"].(float64)
		}
		if int(total) != len(sends) {
			t.Errorf("stats: got %v sends, want %d", total, len(sends))
		}
		servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?app=nope", nil), http.StatusBadRequest, "invalid_request")
	})

	t.Run("BadSettingsAreRefusedNamingEachField", func(t *testing.T) {
		r := servertest.AdminCall(t, in, http.MethodPatch, "/admin/api/apps/"+app, map[string]any{
			"code_length": 3, "code_ttl_seconds": 900, "locales": []string{"xx"}, "send_rules": "1/", "access": "open",
		})
		servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
		errs, _ := r.Body["errors"].(map[string]any)
		for _, f := range []string{"code_length", "code_ttl_seconds", "locales", "send_rules", "access"} {
			if errs[f] == nil {
				t.Errorf("errors: got %v, want %s named", errs, f)
			}
		}
		if got := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/"+app, nil); got.Num("code_length") != 8 {
			t.Errorf("after a refused change: got %s, want the app unchanged", got.Raw)
		}
		servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodPatch, "/admin/api/apps/default", map[string]any{"name": "x"}), http.StatusBadRequest, "invalid_request")
		servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodDelete, "/admin/api/apps/default", nil), http.StatusBadRequest, "invalid_request")
	})
}

// TestAppChangesReachEveryInstance changes apps through one of three instances and
// waits for the other two to apply each change: within 2 s, as the contract says.
func TestAppChangesReachEveryInstance(t *testing.T) {
	const bound = 2 * time.Second
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_PHONE": "100/1h", "OTP_LIMIT_IP": "off"})
	ins := []*servertest.Instance{servertest.Start(t, env), servertest.Start(t, env), servertest.Start(t, env)}

	// applied polls every instance until probe says the change is there on each.
	applied := func(t *testing.T, what string, probe func(in *servertest.Instance) bool) {
		t.Helper()
		start := time.Now()
		for i, in := range ins {
			for !probe(in) {
				if time.Since(start) > bound {
					t.Fatalf("%s: instance %d had not applied it after %v", what, i, bound)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		t.Logf("%s: on all %d instances after %v", what, len(ins), time.Since(start).Round(time.Millisecond))
	}

	app := servertest.CreateApp(t, ins[0], map[string]any{"name": "Reloaded", "access": "public"})
	applied(t, "created app", func(in *servertest.Instance) bool {
		return servertest.AppSend(t, in, app, servertest.NewPhone()).Status == http.StatusCreated
	})

	servertest.WantStatus(t, servertest.AdminCall(t, ins[0], http.MethodPatch, "/admin/api/apps/"+app, map[string]any{"access": "key"}), http.StatusOK, "")
	applied(t, "access key", func(in *servertest.Instance) bool {
		return servertest.AppSend(t, in, app, servertest.NewPhone()).Status == http.StatusUnauthorized
	})

	kid, secret := servertest.CreateKey(t, ins[0], app, false)
	applied(t, "new key", func(in *servertest.Instance) bool {
		return servertest.AppSend(t, in, app, servertest.NewPhone(), "Authorization", "Bearer "+secret).Status == http.StatusCreated
	})

	if r := servertest.AdminCall(t, ins[0], http.MethodDelete, "/admin/api/apps/"+app+"/keys/"+kid, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: got %d %s", r.Status, r.Raw)
	}
	applied(t, "revoked key", func(in *servertest.Instance) bool {
		return servertest.AppSend(t, in, app, servertest.NewPhone(), "Authorization", "Bearer "+secret).Status == http.StatusUnauthorized
	})

	if r := servertest.AdminCall(t, ins[0], http.MethodDelete, "/admin/api/apps/"+app, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: got %d %s", r.Status, r.Raw)
	}
	applied(t, "deleted app", func(in *servertest.Instance) bool {
		return servertest.AppSend(t, in, app, servertest.NewPhone()).Status == http.StatusNotFound
	})
}
