package admin

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAdminInvalidTextIsRefused holds the admin listener to refusing a NUL or invalid
// UTF-8 in a JSON body, a console form, a query or a path parameter with 400
// invalid_request naming the field, after authentication, and to writing nothing.
func TestAdminInvalidTextIsRefused(t *testing.T) {
	e := newFraudEnv(t)
	cookie, token := e.csrfSession(t)
	consoleForm := func(values url.Values) map[string]string {
		return map[string]string{"Content-Type": "application/x-www-form-urlencoded", "body": values.Encode(),
			"Cookie": cookie.Name + "=" + cookie.Value}
	}
	for _, c := range []struct {
		name, method, target, auth, field string
		header                            map[string]string
		page                              bool
	}{
		{"NULInAPINote", "POST", "/admin/api/fraud/lists", bearer(testAdminToken), "note",
			map[string]string{"Content-Type": "application/json", "body": `{"list":"block","value":"+8190123","note":"premium\u0000range"}`}, false},
		{"NULInAPIValue", "POST", "/admin/api/fraud/lists", bearer(testAdminToken), "value",
			map[string]string{"Content-Type": "application/json", "body": `{"list":"block","value":"+8190\u0000123"}`}, false},
		{"NULInConsoleNote", "POST", "/admin/fraud/lists", basic("support", testAdminToken), "note",
			consoleForm(url.Values{"list": {"block"}, "value": {"+8190123"}, "note": {"premium\x00range"}, "csrf": {token}}), true},
		{"InvalidUTF8InConsoleNote", "POST", "/admin/fraud/lists", basic("support", testAdminToken), "note",
			consoleForm(url.Values{"list": {"block"}, "value": {"+8190123"}, "note": {"premium\xffrange"}, "csrf": {token}}), true},
		{"NULInQuery", "GET", "/admin/api/fraud/lists?list=block%00", bearer(testAdminToken), "list", nil, false},
		{"InvalidUTF8InQuery", "GET", "/admin/api/sends?phone=%FF", bearer(testAdminToken), "phone", nil, false},
		{"NULInConsoleQuery", "GET", "/admin/?phone=%00", basic("support", testAdminToken), "phone", nil, true},
		{"NULInPath", "DELETE", "/admin/api/fraud/lists/1%00", bearer(testAdminToken), "id", nil, false},
		{"InvalidUTF8InPath", "GET", "/admin/api/sends/%C3", bearer(testAdminToken), "id", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := e.call(t, c.method, c.target, c.auth, c.header)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status: got %d, want 400 (%s)", w.Code, w.Body)
			}
			if c.page {
				if !strings.Contains(w.Body.String(), c.field) {
					t.Errorf("the error page does not name %q: %s", c.field, w.Body)
				}
			} else if p := decodeProblem(t, w); p.Code != "invalid_request" || p.Errors[c.field] == "" {
				t.Errorf("got %+v, want invalid_request naming %q", p, c.field)
			}
			if st, _ := e.store.FraudState(t.Context()); len(st.Entries) != 0 {
				t.Errorf("got entries %+v, want none", st.Entries)
			}
		})
	}
	t.Run("UnauthenticatedIs401First", func(t *testing.T) {
		if w := e.call(t, "GET", "/admin/api/sends?phone=%00", "", nil); w.Code != http.StatusUnauthorized {
			t.Errorf("status: got %d, want 401", w.Code)
		}
	})
}
