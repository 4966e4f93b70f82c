package inproc

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"otpgate/internal/apitest"
	"otpgate/internal/server/servertest"
)

// browserCall sends what a browser page of origin sends: a preflight (OPTIONS with
// Access-Control-Request-Method) or the POST itself, checked against the public document.
func browserCall(t *testing.T, method, url, origin string) *http.Response {
	t.Helper()
	var body []byte
	if method == http.MethodPost {
		body = []byte(`{"phone":"` + servertest.NewPhone() + `"}`)
	}
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Origin", origin)
	if method == http.MethodOptions {
		req.Header.Set("Access-Control-Request-Method", http.MethodPost)
		req.Header.Set("Access-Control-Request-Headers", "content-type,idempotency-key")
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := servertest.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, err := apitest.Public().Check(apitest.Exchange{Request: req, RequestBody: body, Status: resp.StatusCode, Header: resp.Header, Body: raw}); err != nil {
		t.Errorf("openapi: %v\nbody: %s", err, raw)
	}
	return resp
}

func TestBrowserOrigins(t *testing.T) {
	const shop, dev, evil = "https://shop.example.com", "http://localhost:5173", "https://evil.example.com"
	s := servertest.NewTokenSetup(t, map[string]string{"OTP_ALLOWED_ORIGINS": dev})
	app := servertest.CreateApp(t, s.In, map[string]any{"name": "Web shop", "allowed_origins": []string{"https://SHOP.example.com:443"}})
	for _, c := range []struct {
		name, url, origin string
		allowed           bool
	}{
		{"AppListedOrigin", "/v1/apps/" + app + "/verifications", shop, true},
		{"AppListedOriginCheck", "/v1/apps/" + app + "/verifications/check", shop, true},
		{"AppUnlistedOrigin", "/v1/apps/" + app + "/verifications", evil, false},
		{"AppOriginOfTheDefaultApp", "/v1/apps/" + app + "/verifications", dev, false},
		{"DefaultAppFromTheEnvironment", "/v1/verifications", dev, true},
		{"DefaultAppByAlias", "/v1/apps/default/verifications/check", dev, true},
		{"DefaultAppUnlisted", "/v1/verifications", shop, false},
		{"AnotherAppListsNone", "/v1/apps/" + s.A + "/verifications", shop, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			pre := browserCall(t, http.MethodOptions, s.In.API+c.url, c.origin)
			got := pre.Header.Get("Access-Control-Allow-Origin")
			if pre.StatusCode != http.StatusNoContent || (got == c.origin) != c.allowed || (!c.allowed && got != "") {
				t.Fatalf("preflight: got %d, Allow-Origin %q; want 204 allowing %v", pre.StatusCode, got, c.allowed)
			}
			if c.allowed && (pre.Header.Get("Access-Control-Max-Age") != "7200" || pre.Header.Get("Access-Control-Allow-Methods") != "POST" ||
				pre.Header.Get("Access-Control-Allow-Headers") != "Content-Type, Idempotency-Key" || pre.Header.Get("Access-Control-Allow-Credentials") != "") {
				t.Fatalf("preflight headers: got %v; want POST, Content-Type and Idempotency-Key, cached 7200 s, no credentials", pre.Header)
			}
			if !c.allowed && pre.Header.Get("Access-Control-Allow-Methods") != "" {
				t.Fatalf("an unlisted origin got %v", pre.Header)
			}
			resp := browserCall(t, http.MethodPost, s.In.API+c.url, c.origin)
			got = resp.Header.Get("Access-Control-Allow-Origin")
			if (got == c.origin) != c.allowed || (!c.allowed && got != "") || resp.Header.Get("Vary") != "Origin" {
				t.Fatalf("POST: got %d, Allow-Origin %q, Vary %q; want allowing %v, Vary Origin", resp.StatusCode, got, resp.Header.Get("Vary"), c.allowed)
			}
			if c.allowed && resp.Header.Get("Access-Control-Expose-Headers") != "Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, X-Request-Id" {
				t.Fatalf("POST: got Expose-Headers %q", resp.Header.Get("Access-Control-Expose-Headers"))
			}
		})
	}

	t.Run("OtherRoutesAnswerAsBefore", func(t *testing.T) {
		for _, path := range []string{"/v1/apps/" + app + "/tokens/redeem", "/healthz"} {
			req, _ := http.NewRequest(http.MethodOptions, s.In.API+path, nil)
			req.Header.Set("Origin", shop)
			req.Header.Set("Access-Control-Request-Method", http.MethodPost)
			resp, err := servertest.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("%s: got %d, Allow-Origin %q; want 405 without CORS", path, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
			}
		}
	})

	t.Run("AKeyAppListsNoOrigin", func(t *testing.T) {
		r := servertest.AdminCall(t, s.In, http.MethodPost, "/admin/api/apps", map[string]any{"name": "Server", "access": "key", "allowed_origins": []string{shop}})
		servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
		r = servertest.AdminCall(t, s.In, http.MethodPatch, "/admin/api/apps/"+app, map[string]any{"allowed_origins": []string{"ftp://shop.example.com"}})
		servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
	})
}
