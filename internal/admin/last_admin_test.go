package admin

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"otpgate/internal/operators"
)

// TestTheLastActiveAdminStays: neither the API nor the console disables or demotes the
// last active admin; the refusal is a 400 naming the field, and nothing changes.
func TestTheLastActiveAdminStays(t *testing.T) {
	e := newFullEnv(t)
	id := e.ids[operators.RoleAdmin]
	unchanged := func(t *testing.T) {
		t.Helper()
		info, err := e.ops.GetOperator(t.Context(), id)
		if err != nil || info.Operator.Role != operators.RoleAdmin || info.Operator.Disabled {
			t.Errorf("the admin: got %+v, %v; want an active admin still", info.Operator, err)
		}
	}
	for name, body := range map[string]string{"Demote": `{"role":"viewer"}`, "Disable": `{"disabled":true}`, "Both": `{"role":"operator","disabled":true}`} {
		t.Run("API"+name, func(t *testing.T) {
			w := e.call(t, http.MethodPatch, "/admin/api/operators/"+id, bearer(testAdminToken), map[string]string{"Content-Type": "application/json", "body": body})
			if w.Code != http.StatusBadRequest || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/problem+json") || !strings.Contains(w.Body.String(), "last active admin") {
				t.Errorf("got %d %s %s, want 400 problem+json about the last active admin", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			unchanged(t)
		})
	}
	t.Run("Console", func(t *testing.T) {
		cookie, token := e.csrfSession(t)
		for _, form := range []url.Values{{"role": {"viewer"}}, {"disabled": {"true"}}} {
			form.Set(csrfField, token)
			w := e.call(t, http.MethodPost, "/admin/operators/"+id, basic("support", testAdminToken), map[string]string{
				"Content-Type": "application/x-www-form-urlencoded", "body": form.Encode(), "Cookie": cookie.Name + "=" + cookie.Value})
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "last active admin") {
				t.Errorf("%v: got %d, want 400 with the page saying why", form, w.Code)
			}
			unchanged(t)
		}
	})
	t.Run("WithAnotherAdminItMayGo", func(t *testing.T) {
		if _, err := e.ops.CreateOperator(t.Context(), operators.NewOperator{Email: "second-admin@example.com", Role: "admin"}, "test"); err != nil {
			t.Fatal(err)
		}
		if w := e.call(t, http.MethodPatch, "/admin/api/operators/"+id, bearer(testAdminToken), map[string]string{"Content-Type": "application/json", "body": `{"disabled":true}`}); w.Code != http.StatusOK {
			t.Errorf("got %d %s, want 200", w.Code, w.Body)
		}
	})
}
