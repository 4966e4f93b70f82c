package admin

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/rate"
)

// page GETs a console page with the browser login and fails unless it has status want.
func (e *adminEnv) page(t *testing.T, target string, want int) string {
	t.Helper()
	w := e.call(t, http.MethodGet, target, basic("support", testAdminToken), nil)
	if w.Code != want {
		t.Fatalf("GET %s: got %d, want %d; body %s\nlogs:\n%s", target, w.Code, want, w.Body, e.logs)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("GET %s: content type: got %q, want text/html; charset=utf-8", target, ct)
	}
	// html/template writes + as &#43;; assertions read the text a person sees.
	return html.UnescapeString(w.Body.String())
}

func TestAdminHistoryPage(t *testing.T) {
	e := newAdminEnv(t, nil)
	f := e.seedFixture()

	t.Run("ShowsEveryColumn", func(t *testing.T) {
		body := e.page(t, "/admin/", http.StatusOK)
		for _, want := range []string{phoneA, phoneB, ipA, ipV6, "blocked:phone 1/1m", "duplicate", "approved", "expired",
			"failed", "msg-" + f.sendA[:8], `href="/admin/verifications/` + f.verA + `"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		// Newest first: phone D's send is above phone A's.
		if strings.Index(body, phoneD) > strings.Index(body, phoneA) {
			t.Errorf("got phone A above phone D, want newest first")
		}
		assertNoCodeHash(t, body)
	})

	t.Run("FilterByPhoneInAnyFormat", func(t *testing.T) {
		body := e.page(t, "/admin/?phone="+url.QueryEscape("090 1234 5678"), http.StatusOK)
		if strings.Contains(body, phoneB) || strings.Count(body, `<td data-label="To" class="phone">`+phoneA) != 3 {
			t.Errorf("got a page with other phones or without phone A's three sends")
		}
		if !strings.Contains(body, `value="`+phoneA+`"`) {
			t.Errorf("the phone input does not show the normalised number %s", phoneA)
		}
	})

	t.Run("BadFiltersShowAnError", func(t *testing.T) {
		body := e.page(t, "/admin/?phone=abc&from=soon&status=lost", http.StatusBadRequest)
		if !strings.Contains(body, `role="alert"`) {
			t.Fatal("no alert on the page")
		}
		for _, want := range []string{"<strong>phone</strong>", "<strong>from</strong>", "<strong>status</strong>", `value="abc"`, `value="soon"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Contains(body, phoneA) {
			t.Errorf("page with bad filters lists sends")
		}
	})

	t.Run("NextLinkKeepsFilters", func(t *testing.T) {
		body := e.page(t, "/admin/?limit=1&status=blocked&phone=09012345678&from=2000-01-01T00:00", http.StatusOK)
		m := regexp.MustCompile(`<a rel="next" href="([^"]+)">`).FindStringSubmatch(body)
		if m != nil {
			t.Fatalf("got a next link %q for the only blocked send, want none", m[1])
		}
		body = e.page(t, "/admin/?limit=1&phone=09012345678&from=2000-01-01T00:00", http.StatusOK)
		m = regexp.MustCompile(`<a rel="next" href="([^"]+)">`).FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no next link")
		}
		next, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
		if err != nil {
			t.Fatal(err)
		}
		q := next.Query()
		if q.Get("phone") != phoneA || q.Get("cursor") == "" || q.Get("limit") != "1" || q.Get("from") != "2000-01-01T00:00:00Z" {
			t.Errorf("next link query: got %v, want phone, from, limit and a cursor", q)
		}
		second := e.page(t, next.String(), http.StatusOK)
		if !strings.Contains(second, "duplicate 1/5s") || !strings.Contains(second, "← Newest") {
			t.Errorf("second page: want phone A's second newest send (the duplicate) and a link to the newest")
		}
	})

	t.Run("VerificationShowsSendsAndAttempts", func(t *testing.T) {
		body := e.page(t, "/admin/verifications/"+f.verA, http.StatusOK)
		for _, want := range []string{f.verA, phoneA, "invalid_code", "outcome-approved", "1 of 5", f.sendA[:8]} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		assertNoCodeHash(t, body)
	})

	t.Run("VerificationPastItsExpiryShowsExpired", func(t *testing.T) {
		c, err := e.store.Send(context.Background(), f.sendC)
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		body := e.page(t, "/admin/verifications/"+c.VerificationID, http.StatusOK)
		if want := `<dd><span class="status st-expired">expired</span></dd>`; !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	})

	t.Run("UnknownVerificationIsNotFound", func(t *testing.T) {
		body := e.page(t, "/admin/verifications/0190a5c2-7b3e-7c1d-9f2a-1b2c3d4e5f60", http.StatusNotFound)
		if !strings.Contains(body, "no such send or verification") {
			t.Errorf("404 page does not say what is missing")
		}
	})

	t.Run("SecurityHeaders", func(t *testing.T) {
		for _, path := range []string{"/admin/", "/admin/api/sends", "/admin/charts", "/admin/limits"} {
			w := e.call(t, http.MethodGet, path, basic("x", testAdminToken), nil)
			h := w.Header()
			for k, want := range map[string]string{
				"X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
			} {
				if got := h.Get(k); got != want {
					t.Errorf("%s %s: got %q, want %q", path, k, got, want)
				}
			}
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "script-src 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("%s CSP %q lacks %q", path, csp, want)
				}
			}
		}
		w := e.call(t, http.MethodGet, "/admin/static/admin.css", "", nil)
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/css") {
			t.Errorf("stylesheet: got %d %q, want 200 text/css", w.Code, w.Header().Get("Content-Type"))
		}
		if w := e.call(t, http.MethodGet, "/admin/static/", "", nil); w.Code != http.StatusNotFound {
			t.Errorf("static directory: got %d, want 404", w.Code)
		}
	})
}

func TestAdminLimitsPage(t *testing.T) {
	e := newAdminEnv(t, nil)
	ctx := context.Background()
	phoneRules := testRules()[0].Rules
	if d, err := e.limiter.Allow(ctx, []rate.Limit{{Scope: otp.ScopePhone, Key: phoneA, Rules: phoneRules}}); err != nil || !d.Allowed {
		t.Fatalf("Allow: %v, %v", d.Allowed, err)
	}
	used := func(t *testing.T) int {
		t.Helper()
		states, err := e.limiter.Inspect(ctx, rate.Limit{Scope: otp.ScopePhone, Key: phoneA, Rules: phoneRules})
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		return states[0].Used
	}

	t.Run("LookupShowsUsedOfLimit", func(t *testing.T) {
		body := e.page(t, "/admin/limits?phone=090-1234-5678", http.StatusOK)
		for _, want := range []string{phoneA, `<span class="used">1/1</span>`, `<span class="used">1/10</span>`, "check_phone", `action="/admin/limits/reset"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if !regexp.MustCompile(`<td data-label="Frees up in">(\d+s|1m 00s)</td>`).MatchString(body) {
			t.Errorf("page does not say when the minute rule frees up")
		}
	})

	t.Run("BadLookupShowsAnError", func(t *testing.T) {
		body := e.page(t, "/admin/limits?ip=not-an-ip", http.StatusBadRequest)
		if !strings.Contains(body, `role="alert"`) || !strings.Contains(body, "<strong>ip</strong>") {
			t.Errorf("page does not name the bad ip")
		}
	})

	t.Run("ConfirmPageCarriesTheCSRFToken", func(t *testing.T) {
		body := e.page(t, "/admin/limits/reset?phone=09012345678", http.StatusOK)
		if !regexp.MustCompile(`<form method="post" action="/admin/limits/reset"`).MatchString(body) ||
			!regexp.MustCompile(`<input type="hidden" name="csrf" value="[A-Za-z0-9_-]{43}">`).MatchString(body) {
			t.Errorf("confirm page lacks a POST form with a CSRF token")
		}
		if used(t) != 1 {
			t.Errorf("the confirm page reset the limit")
		}
	})

	cookie, token := e.csrfSession(t)
	form := func(values url.Values) map[string]string {
		return map[string]string{"Content-Type": "application/x-www-form-urlencoded", "body": values.Encode(),
			"Cookie": cookie.Name + "=" + cookie.Value}
	}
	for _, tc := range []struct {
		name   string
		header map[string]string
	}{
		{"PostWithoutTokenIsRefused", form(url.Values{"phone": {phoneA}})},
		{"PostWithWrongTokenIsRefused", form(url.Values{"phone": {phoneA}, "csrf": {e.otherToken()}})},
		{"PostWithoutCookieIsRefused", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
			"body": url.Values{"phone": {phoneA}, "csrf": {token}}.Encode()}},
		{"PostFromAnotherOriginIsRefused", with(form(url.Values{"phone": {phoneA}, "csrf": {token}}), "Origin", "https://evil.example")},
		{"PostFromAnotherSiteIsRefused", with(form(url.Values{"phone": {phoneA}, "csrf": {token}}), "Sec-Fetch-Site", "cross-site")},
		// A sandboxed frame, a data: URL or a cross-origin redirect: never the console.
		{"PostWithNullOriginIsRefused", with(with(form(url.Values{"phone": {phoneA}, "csrf": {token}}), "Origin", "null"), "Sec-Fetch-Site", "same-origin")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.call(t, http.MethodPost, "/admin/limits/reset", basic("support", testAdminToken), tc.header)
			if w.Code != http.StatusForbidden {
				t.Fatalf("got %d, want 403; body %s", w.Code, w.Body)
			}
			if used(t) != 1 {
				t.Errorf("limit was reset by a refused request")
			}
		})
	}

	t.Run("ResetClearsAndIsListed", func(t *testing.T) {
		w := e.call(t, http.MethodPost, "/admin/limits/reset", basic("support", testAdminToken),
			with(with(form(url.Values{"phone": {"090-1234-5678"}, "csrf": {token}}), "Origin", "http://example.com"), "Sec-Fetch-Site", "same-origin"))
		if w.Code != http.StatusSeeOther {
			t.Fatalf("got %d, want 303; body %s", w.Code, w.Body)
		}
		loc := w.Header().Get("Location")
		if loc != "/admin/limits?phone=%2B819012345678&reset=done" {
			t.Errorf("redirect: got %q, want the phone's limits page", loc)
		}
		if used(t) != 0 {
			t.Errorf("used after reset: got %d, want 0", used(t))
		}
		body := e.page(t, loc, http.StatusOK)
		for _, want := range []string{"were reset", `<span class="used">0/1</span>`, "limit_reset", "phone:" + pii.Mask(phoneA), `console user "support"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page after reset lacks %q", want)
			}
		}
	})
}

// with returns h with one more header.
func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range h {
		out[hk] = hv
	}
	return out
}

// otherToken is a well-formed CSRF token for some other browser's nonce.
func (e *adminEnv) otherToken() string {
	return newCSRFGuard(testAdminToken).tokenFor("AAAAAAAAAAAAAAAAAAAAAA", csrfPerson(operators.BreakGlass()))
}

func TestAdminChartsPage(t *testing.T) {
	e := newAdminEnv(t, nil)
	e.seedFixture()
	body := e.page(t, "/admin/charts", http.StatusOK)
	if n := strings.Count(body, `<svg class="chart"`); n != 2 {
		t.Fatalf("got %d charts, want 2", n)
	}
	for _, kind := range []string{"sent", "failed", "blocked", "duplicate", "approved"} {
		m := regexp.MustCompile(`<rect class="bar bar-` + kind + `" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Errorf("no %s bar", kind)
			continue
		}
		if h, _ := strconv.ParseFloat(m[1], 64); h <= 0 {
			t.Errorf("%s bar height: got %v, want > 0", kind, h)
		}
	}
	if !strings.Contains(body, `<path class="ratio" d="M`) {
		t.Errorf("no approval ratio line")
	}
	if !strings.Contains(body, "blocked: phone 1/1m") {
		t.Errorf("legend does not name the blocking rule")
	}
}
