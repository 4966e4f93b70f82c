package inproc

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"otpgate/internal/server/servertest"
)

// usPhone is a valid US number, outside the JP-only default app of the tenancy tests.
func usPhone() string { return fmt.Sprintf("+1202555%04d", rand.IntN(10_000)) }

// limitsOf reads the admin API's limiter state of a phone: used count per scope and key.
func limitsOf(t *testing.T, in *servertest.Instance, phone string) map[string]int {
	t.Helper()
	r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/limits?phone="+url.QueryEscape(phone), nil)
	servertest.WantStatus(t, r, http.StatusOK, "")
	out := map[string]int{}
	rules, _ := r.Body["rules"].([]any)
	for _, x := range rules {
		m := x.(map[string]any)
		out[m["scope"].(string)+" "+m["key"].(string)+" "+m["rule"].(string)] += int(m["used"].(float64))
	}
	return out
}

// TestNoCrossTenantLockout reproduces the security probe's finding (issue 19): callers of
// the public default app, who need no key, checked and sent for a phone until its shared
// per-phone budgets were spent, and the phone's user could then neither get nor check a
// code in any other app. Now the per-address budgets have a partition per public app and
// one for the key apps, and a check spends one only when there is a pending verification
// to check.
func TestNoCrossTenantLockout(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_IP": "off", "OTP_LIMIT_CHECK_IP": "1000/1h",
		"OTP_LIMIT_PHONE": "1/1m,10/1h", "OTP_LIMIT_CHECK_PHONE": "3/1h", "OTP_ALLOWED_COUNTRIES": "JP",
	}))
	keyApp := servertest.CreateApp(t, in, map[string]any{"name": "Bank", "access": "key", "allowed_countries": []string{}})
	_, secret := servertest.CreateKey(t, in, keyApp, false)
	bearer := []string{"Authorization", "Bearer " + secret}
	keyApp2 := servertest.CreateApp(t, in, map[string]any{"name": "Broker", "access": "key", "allowed_countries": []string{}})
	_, secret2 := servertest.CreateKey(t, in, keyApp2, false)
	publicApp := servertest.CreateApp(t, in, map[string]any{"name": "Shop", "allowed_countries": []string{}})
	keyCheck := func(phone, code string) servertest.Reply {
		t.Helper()
		return servertest.Post(t, in.API+"/v1/apps/"+keyApp+"/verifications/check", map[string]string{"phone": phone, "code": code}, bearer...)
	}

	t.Run("ChecksThroughTheDefaultAppLeaveAKeyAppsUserTheirChecks", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.AppSend(t, in, keyApp, phone, bearer...), http.StatusCreated, "")
		code := servertest.LastCode(t, p, phone)
		// The probe: more checks than the phone's check budget, through the public default
		// app, where the phone has no verification.
		for i := range 12 {
			r := servertest.Check(t, in, map[string]string{"phone": phone, "code": "000000"})
			if r.Status != http.StatusNotFound || r.Str("code") != "not_found" {
				t.Fatalf("default app check %d: got %d %s, want 404 not_found: nothing to check, nothing of the phone spent", i+1, r.Status, r.Raw)
			}
		}
		// Now with a pending verification in the default app: its checks spend the default
		// app's partition until it refuses, and only it.
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		limited := false
		for range 6 {
			r := servertest.Check(t, in, map[string]string{"phone": phone, "code": "000000"})
			if r.Status == http.StatusTooManyRequests && r.Str("code") == "rate_limited" {
				limited = true
				break
			}
		}
		if !limited {
			t.Fatalf("the default app's checks were never limited: its own partition must still hold")
		}
		// The key app's user still checks, wrong and then right.
		if r := keyCheck(phone, "00000000"[:len(code)]); r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("key app wrong code: got %d %s, want 422 invalid_code", r.Status, r.Raw)
		}
		r := keyCheck(phone, code)
		servertest.WantStatus(t, r, http.StatusOK, "")
		if r.Str("status") != "approved" {
			t.Errorf("got %s, want approved", r.Raw)
		}
	})

	t.Run("SendsThroughTheDefaultAppLeaveAKeyAppsUserTheirCodes", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusTooManyRequests, "rate_limited")
		if v := r.Body["violations"].([]any)[0].(map[string]any); v["scope"] != "phone" {
			t.Fatalf("got %s, want the phone scope refusing", r.Raw)
		}
		// The default app's phone budget is spent; the key app's user still gets a code,
		// and so does the user of another public app.
		servertest.WantStatus(t, servertest.AppSend(t, in, keyApp, phone, bearer...), http.StatusCreated, "")
		servertest.WantStatus(t, servertest.AppSend(t, in, publicApp, phone), http.StatusCreated, "")
		// Key apps share one partition: their callers are authenticated, and a number
		// costs the same whichever of them asks.
		servertest.WantStatus(t, servertest.AppSend(t, in, keyApp2, phone, "Authorization", "Bearer "+secret2), http.StatusTooManyRequests, "rate_limited")
		used := limitsOf(t, in, phone)
		// Each partition is keyed by the number's index, never by the number.
		idx := servertest.AddressIndex(t, phone)
		for _, k := range []string{"phone " + idx + " 1/1m", "phone key|" + idx + " 1/1m", "phone " + publicApp + "|" + idx + " 1/1m"} {
			if used[k] != 1 {
				t.Errorf("admin limits: got %v, want %q used once", used, k)
			}
		}
		// The console shows each partition by its key.
		req, _ := http.NewRequest(http.MethodGet, in.Admin+"/admin/limits?phone="+url.QueryEscape(phone), nil)
		req.SetBasicAuth("admin", servertest.TestAdminToken)
		resp, err := servertest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, k := range []string{"key|" + idx, publicApp + "|" + idx} {
			// html/template writes + as &#43;.
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), strings.ReplaceAll(k, "+", "&#43;")) {
				t.Errorf("console limits page: got %d, want it to list partition %q", resp.StatusCode, k)
			}
		}
		// The operator's reset clears every partition.
		servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodDelete, "/admin/api/limits?phone="+url.QueryEscape(phone), nil), http.StatusOK, "")
		for k, n := range limitsOf(t, in, phone) {
			if n != 0 {
				t.Errorf("after reset: %s used %d, want 0", k, n)
			}
		}
	})

	t.Run("ADefaultAppCallerWhoseNumberItsCountriesExcludeSpendsNothing", func(t *testing.T) {
		phone := usPhone()
		for range 5 {
			servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusForbidden, "country_not_allowed")
			r := servertest.Check(t, in, map[string]string{"phone": phone, "code": "000000"})
			servertest.WantStatus(t, r, http.StatusNotFound, "not_found")
			if h := r.Header.Get("RateLimit"); h != "" {
				t.Errorf("check: got RateLimit %q, want none: the limiter is not asked", h)
			}
		}
		for k, n := range limitsOf(t, in, phone) {
			if n != 0 {
				t.Errorf("%s used %d, want 0", k, n)
			}
		}
		servertest.WantStatus(t, servertest.AppSend(t, in, keyApp, phone, bearer...), http.StatusCreated, "")
		servertest.WantStatus(t, keyCheck(phone, servertest.LastCode(t, p, phone)), http.StatusOK, "")
	})

	t.Run("ConcurrentDefaultAppChecksLeaveAKeyAppsUserTheirChecks", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.AppSend(t, in, keyApp, phone, bearer...), http.StatusCreated, "")
		code := servertest.LastCode(t, p, phone)
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := servertest.Check(t, in, map[string]string{"phone": phone, "code": "000000"})
				if r.Status != http.StatusNotFound {
					t.Errorf("default app check: got %d %s, want 404", r.Status, r.Raw)
				}
			}()
		}
		wg.Wait()
		servertest.WantStatus(t, keyCheck(phone, code), http.StatusOK, "")
	})
}

// TestDefaultAppAccess runs the server in each OTP_DEFAULT_APP_ACCESS mode.
func TestDefaultAppAccess(t *testing.T) {
	const accountSID, accountToken = "AC0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"
	const defaultSvc = "/v2/Services/VA00000000000000000000000000000001"
	start := func(t *testing.T, mode string) (*servertest.Instance, string) {
		p := servertest.NewProvider(t)
		env := map[string]string{"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_IP": "off", "OTP_ACCOUNT_TOKEN": accountToken}
		if mode != "" {
			env["OTP_DEFAULT_APP_ACCESS"] = mode
		}
		in := servertest.Start(t, servertest.ProdEnv(t, p, env))
		phone := servertest.NewPhone()
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("messages: %v", p.Received(phone))
			}
		})
		return in, phone
	}

	t.Run("PublicByDefault", func(t *testing.T) {
		in, phone := start(t, "")
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		if r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/default", nil); r.Str("access") != "public" {
			t.Errorf("got %s, want access public", r.Raw)
		}
	})

	t.Run("KeyNeedsOneOfTheDefaultAppsKeys", func(t *testing.T) {
		in, phone := start(t, "key")
		for _, path := range []string{"/v1/verifications", "/v1/apps/default/verifications"} {
			r := servertest.Post(t, in.API+path, map[string]string{"phone": phone})
			servertest.WantStatus(t, r, http.StatusUnauthorized, "unauthorized")
		}
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": "000000"}), http.StatusUnauthorized, "unauthorized")
		keyID, secret := servertest.CreateKey(t, in, "default", false)
		servertest.WantStatus(t, servertest.Send(t, in, phone, "Authorization", "Bearer "+secret), http.StatusCreated, "")
		status, body := twilioCall(t, in, keyID, secret, http.MethodPost, defaultSvc+"/Verifications", url.Values{"To": {servertest.NewPhone()}, "Channel": {"sms"}}, "")
		if status != http.StatusCreated {
			t.Errorf("twilio with the default app's key: got %d %v, want the verification", status, body)
		}
		if r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/default", nil); r.Str("access") != "key" {
			t.Errorf("got %s, want access key", r.Raw)
		}
	})

	t.Run("OffRefusesEveryCallNamingTheDefaultApp", func(t *testing.T) {
		in, phone := start(t, "off")
		keyID, secret := servertest.CreateKey(t, in, "default", false)
		for _, c := range []struct {
			path    string
			body    map[string]string
			headers []string
		}{
			{"/v1/verifications", map[string]string{"phone": phone}, nil},
			{"/v1/verifications/check", map[string]string{"phone": phone, "code": "000000"}, nil},
			{"/v1/apps/default/verifications", map[string]string{"phone": phone}, nil},
			{"/v1/apps/00000000-0000-0000-0000-000000000001/verifications/check", map[string]string{"phone": phone, "code": "000000"}, nil},
			{"/v1/verifications", map[string]string{"phone": phone}, []string{"Authorization", "Bearer " + secret}},
			// Not even a malformed body gets further than the refusal.
			{"/v1/verifications", map[string]string{"phone": "nope"}, nil},
		} {
			r := servertest.Post(t, in.API+c.path, c.body, c.headers...)
			servertest.WantStatus(t, r, http.StatusNotFound, "not_found")
			if d := r.Str("detail"); !strings.Contains(d, "default app is off") || !strings.Contains(d, "OTP_DEFAULT_APP_ACCESS") {
				t.Errorf("%s: got detail %q, want it to name the default app and the setting", c.path, d)
			}
		}
		for _, cred := range [][2]string{{keyID, secret}, {accountSID, accountToken}} {
			status, body := twilioCall(t, in, cred[0], cred[1], http.MethodPost, defaultSvc+"/Verifications", url.Values{"To": {phone}, "Channel": {"sms"}}, "")
			if msg, _ := body["message"].(string); status != http.StatusNotFound || body["code"] != float64(20404) ||
				!strings.Contains(msg, "default app is off") || !strings.Contains(msg, "OTP_DEFAULT_APP_ACCESS") {
				t.Errorf("twilio as %s: got %d %v, want 404 with code 20404 naming the default app and the setting", cred[0], status, body)
			}
		}
		if r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/default", nil); r.Str("access") != "off" {
			t.Errorf("got %s, want access off", r.Raw)
		}
		// Apps of their own still serve.
		app := servertest.CreateApp(t, in, map[string]any{"name": "Shop"})
		servertest.WantStatus(t, servertest.AppSend(t, in, app, phone), http.StatusCreated, "")
	})
}
