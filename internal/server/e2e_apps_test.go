package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apitest"
)

const testAdminToken = "test-admin-token-0123456789"

// adminCall sends a JSON request to an instance's admin API with the admin token and
// checks the exchange against the admin OpenAPI document.
func adminCall(t testing.TB, in *instance, method, path string, body any) reply {
	t.Helper()
	var buf []byte
	switch b := body.(type) {
	case nil:
	case string: // JSON as written, also malformed on purpose
		buf = []byte(b)
	default:
		var err error
		if buf, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	var rd io.Reader
	if len(buf) > 0 {
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, in.admin+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	x := apitest.Exchange{Request: req, RequestBody: buf, Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if _, err := apitest.Admin().Check(x); err != nil {
		t.Errorf("openapi: %v\nbody: %s", err, raw)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: %d reply is not JSON: %q", method, path, resp.StatusCode, raw)
		}
	}
	return r
}

// createApp makes an app through the admin API and returns its id.
func createApp(t testing.TB, in *instance, settings map[string]any) string {
	t.Helper()
	r := adminCall(t, in, http.MethodPost, "/admin/api/apps", settings)
	wantStatus(t, r, http.StatusCreated, "")
	return r.str("id")
}

// createKey makes a key of an app and returns its id and secret.
func createKey(t testing.TB, in *instance, appID string, trusted bool) (id, secret string) {
	t.Helper()
	r := adminCall(t, in, http.MethodPost, "/admin/api/apps/"+appID+"/keys", map[string]any{"name": "backend", "trusted_client_ip": trusted})
	wantStatus(t, r, http.StatusCreated, "")
	if r.str("secret") == "" || r.str("id") == "" {
		t.Fatalf("got %s, want a key with id and secret", r.Raw)
	}
	return r.str("id"), r.str("secret")
}

func appSend(t testing.TB, in *instance, appID, phone string, headers ...string) reply {
	t.Helper()
	return post(t, in.api+"/v1/apps/"+appID+"/verifications", map[string]string{"phone": phone}, headers...)
}

func TestAppsAndKeys(t *testing.T) {
	p := newProvider(t)
	in := startServer(t, prodEnv(t, p, map[string]string{"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_IP": "off"}))
	app := createApp(t, in, map[string]any{"name": "Shop", "access": "key", "code_length": 8, "send_rules": "5/1h"})
	_, secret := createKey(t, in, app, false)
	bearer := "Bearer " + secret

	t.Run("KeyAppRefusesCallsWithoutItsKeyAndSpendsNothing", func(t *testing.T) {
		phone := newPhone()
		for name, headers := range map[string][]string{
			"Missing":    nil,
			"Wrong":      {"Authorization", "Bearer otpgateSK00000000000000000000000000000000" + strings.Repeat("0", 64)},
			"NotOtpgate": {"Authorization", "Bearer something"},
			"Basic":      {"Authorization", "Basic dXNlcjpwYXNz"},
		} {
			r := appSend(t, in, app, phone, headers...)
			if r.Status != http.StatusUnauthorized || r.str("code") != "unauthorized" || r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: got %d %s, want 401 unauthorized with a challenge", name, r.Status, r.Raw)
			}
		}
		if n := len(p.Received(phone)); n != 0 {
			t.Errorf("got %d messages, want none", n)
		}
		// Nothing was spent: the first real send of the phone is allowed by the 1/1m rule.
		wantStatus(t, appSend(t, in, app, phone, "Authorization", bearer), http.StatusCreated, "")
	})

	t.Run("AppSettingsApplyAndVerificationsStayInTheirApp", func(t *testing.T) {
		phone := newPhone()
		r := appSend(t, in, app, phone, "Authorization", bearer)
		wantStatus(t, r, http.StatusCreated, "")
		id := r.str("id")
		code := lastCode(t, p, phone)
		if len(code) != 8 {
			t.Errorf("got code %q, want 8 digits (the app's code length)", code)
		}
		// No locale named: a Japanese number's message is in Japanese.
		if body := p.Received(phone)[0].Body; !strings.HasPrefix(body, "【Shop】認証コード") {
			t.Errorf("got message %q, want it in Japanese, starting with the app's name", body)
		}
		// The default app does not know the app's verification.
		wantStatus(t, check(t, in, map[string]string{"id": id, "code": code[:6]}), http.StatusNotFound, "not_found")
		r = post(t, in.api+"/v1/apps/"+app+"/verifications/check", map[string]string{"phone": phone, "code": code}, "Authorization", bearer)
		wantStatus(t, r, http.StatusOK, "")
		if r.str("id") != id || r.str("status") != "approved" {
			t.Errorf("got %s, want %s approved", r.Raw, id)
		}
	})

	t.Run("DefaultAppAnswersUnderItsAliasAndItsID", func(t *testing.T) {
		phone := newPhone()
		wantStatus(t, appSend(t, in, "default", phone), http.StatusCreated, "")
		r := post(t, in.api+"/v1/apps/00000000-0000-0000-0000-000000000001/verifications/check", map[string]string{"phone": phone, "code": lastCode(t, p, phone)})
		wantStatus(t, r, http.StatusOK, "")
		wantStatus(t, appSend(t, in, "0190a000-0000-7000-8000-0000000000ff", phone), http.StatusNotFound, "not_found")
	})

	t.Run("TrustedKeyNamesTheClientIP", func(t *testing.T) {
		_, trusted := createKey(t, in, app, true)
		phone, other := newPhone(), newPhone()
		wantStatus(t, appSend(t, in, app, phone, "Authorization", "Bearer "+trusted, "Otpgate-Client-Ip", "203.0.113.9"), http.StatusCreated, "")
		wantStatus(t, appSend(t, in, app, other, "Authorization", bearer, "Otpgate-Client-Ip", "203.0.113.10"), http.StatusCreated, "")
		wantStatus(t, appSend(t, in, app, newPhone(), "Authorization", "Bearer "+trusted, "Otpgate-Client-Ip", "not-an-ip"), http.StatusBadRequest, "invalid_request")
		for ph, want := range map[string]string{phone: "203.0.113.9", other: "127.0.0.1"} {
			r := adminCall(t, in, http.MethodGet, "/admin/api/sends?phone="+url.QueryEscape(ph), nil)
			sends, _ := r.Body["sends"].([]any)
			if len(sends) != 1 || sends[0].(map[string]any)["client_ip"] != want {
				t.Errorf("sends of %s: got %s, want one from %s", ph, r.Raw, want)
			}
		}
	})

	t.Run("RevokedKeyIsRefused", func(t *testing.T) {
		kid, s := createKey(t, in, app, false)
		wantStatus(t, appSend(t, in, app, newPhone(), "Authorization", "Bearer "+s), http.StatusCreated, "")
		if r := adminCall(t, in, http.MethodDelete, "/admin/api/apps/"+app+"/keys/"+kid, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: got %d %s, want 204", r.Status, r.Raw)
		}
		wantStatus(t, appSend(t, in, app, newPhone(), "Authorization", "Bearer "+s), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("HistoryAndStatsFilterByApp", func(t *testing.T) {
		r := adminCall(t, in, http.MethodGet, "/admin/api/sends?app="+app+"&limit=200", nil)
		wantStatus(t, r, http.StatusOK, "")
		sends, _ := r.Body["sends"].([]any)
		if len(sends) == 0 {
			t.Fatalf("got no sends of the app")
		}
		for _, s := range sends {
			if s.(map[string]any)["app_id"] != app {
				t.Errorf("got send %v, want only the app's", s)
			}
		}
		r = adminCall(t, in, http.MethodGet, "/admin/api/stats?app="+app, nil)
		wantStatus(t, r, http.StatusOK, "")
		total := 0.0
		for _, b := range r.Body["buckets"].([]any) {
			total += b.(map[string]any)["sends"].(float64)
		}
		if int(total) != len(sends) {
			t.Errorf("stats: got %v sends, want %d", total, len(sends))
		}
		wantStatus(t, adminCall(t, in, http.MethodGet, "/admin/api/sends?app=nope", nil), http.StatusBadRequest, "invalid_request")
	})

	t.Run("BadSettingsAreRefusedNamingEachField", func(t *testing.T) {
		r := adminCall(t, in, http.MethodPatch, "/admin/api/apps/"+app, map[string]any{
			"code_length": 3, "code_ttl_seconds": 900, "locales": []string{"xx"}, "send_rules": "1/", "access": "open",
		})
		wantStatus(t, r, http.StatusBadRequest, "invalid_request")
		errs, _ := r.Body["errors"].(map[string]any)
		for _, f := range []string{"code_length", "code_ttl_seconds", "locales", "send_rules", "access"} {
			if errs[f] == nil {
				t.Errorf("errors: got %v, want %s named", errs, f)
			}
		}
		if got := adminCall(t, in, http.MethodGet, "/admin/api/apps/"+app, nil); got.num("code_length") != 8 {
			t.Errorf("after a refused change: got %s, want the app unchanged", got.Raw)
		}
		wantStatus(t, adminCall(t, in, http.MethodPatch, "/admin/api/apps/default", map[string]any{"name": "x"}), http.StatusBadRequest, "invalid_request")
		wantStatus(t, adminCall(t, in, http.MethodDelete, "/admin/api/apps/default", nil), http.StatusBadRequest, "invalid_request")
	})
}

// TestAppChangesReachEveryInstance changes apps through one of three instances and
// waits for the other two to apply each change: within 2 s, as the contract says.
func TestAppChangesReachEveryInstance(t *testing.T) {
	const bound = 2 * time.Second
	p := newProvider(t)
	env := prodEnv(t, p, map[string]string{"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_PHONE": "100/1h", "OTP_LIMIT_IP": "off"})
	ins := []*instance{startServer(t, env), startServer(t, env), startServer(t, env)}

	// applied polls every instance until probe says the change is there on each.
	applied := func(t *testing.T, what string, probe func(in *instance) bool) {
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

	app := createApp(t, ins[0], map[string]any{"name": "Reloaded", "access": "public"})
	applied(t, "created app", func(in *instance) bool { return appSend(t, in, app, newPhone()).Status == http.StatusCreated })

	wantStatus(t, adminCall(t, ins[0], http.MethodPatch, "/admin/api/apps/"+app, map[string]any{"access": "key"}), http.StatusOK, "")
	applied(t, "access key", func(in *instance) bool { return appSend(t, in, app, newPhone()).Status == http.StatusUnauthorized })

	kid, secret := createKey(t, ins[0], app, false)
	applied(t, "new key", func(in *instance) bool {
		return appSend(t, in, app, newPhone(), "Authorization", "Bearer "+secret).Status == http.StatusCreated
	})

	if r := adminCall(t, ins[0], http.MethodDelete, "/admin/api/apps/"+app+"/keys/"+kid, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: got %d %s", r.Status, r.Raw)
	}
	applied(t, "revoked key", func(in *instance) bool {
		return appSend(t, in, app, newPhone(), "Authorization", "Bearer "+secret).Status == http.StatusUnauthorized
	})

	if r := adminCall(t, ins[0], http.MethodDelete, "/admin/api/apps/"+app, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: got %d %s", r.Status, r.Raw)
	}
	applied(t, "deleted app", func(in *instance) bool { return appSend(t, in, app, newPhone()).Status == http.StatusNotFound })
}
