package admin

import (
	"net/http"
	"strings"
	"testing"

	"otpgate/api"
)

// TestAdminAPIRefusesUnknownQuery holds every documented API operation to refusing a query
// parameter the document does not list for it, naming it, and to taking those it does.
func TestAdminAPIRefusesUnknownQuery(t *testing.T) {
	e := newFraudEnv(t)
	for _, c := range []struct {
		name, method, target, field string
	}{
		{"SinceOnTheSends", "GET", "/admin/api/sends?since=-1h", "since"},
		{"CursorOnTheAudit", "GET", "/admin/api/audit?cursor=%7B%7D", "cursor"},
		{"MisspeltFilter", "GET", "/admin/api/sends?phon=%2B819012345678", "phon"},
		{"OnAnOperationThatTakesNone", "GET", "/admin/api/fraud/config?x=1", "x"},
		{"OnAChange", "DELETE", "/admin/api/fraud/lists/1?force=1", "force"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := e.call(t, c.method, c.target, bearer(testAdminToken), nil)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status: got %d, want 400 (%s)", w.Code, w.Body)
			}
			if p := decodeProblem(t, w); p.Code != "invalid_request" || !strings.Contains(p.Errors[c.field], "not a query parameter") {
				t.Errorf("got %+v, want invalid_request naming %q", p, c.field)
			}
		})
	}
	t.Run("ListedParametersPass", func(t *testing.T) {
		for _, target := range []string{"/admin/api/sends?phone=%2B819012345678&limit=5", "/admin/api/audit?limit=5", "/admin/api/stats?since=24h"} {
			if w := e.call(t, "GET", target, bearer(testAdminToken), nil); w.Code != http.StatusOK {
				t.Errorf("%s: got %d, want 200 (%s)", target, w.Code, w.Body)
			}
		}
	})
	t.Run("UnauthenticatedIs401First", func(t *testing.T) {
		if w := e.call(t, "GET", "/admin/api/sends?since=1h", "", nil); w.Code != http.StatusUnauthorized {
			t.Errorf("status: got %d, want 401", w.Code)
		}
	})
}

// TestAPIQueryReadsTheDocument checks what the check is built from: every operation's
// query parameters, with those of the components it refers to.
func TestAPIQueryReadsTheDocument(t *testing.T) {
	doc, err := api.AdminJSON()
	if err != nil {
		t.Fatal(err)
	}
	q, err := readAPIQuery(doc)
	if err != nil {
		t.Fatal(err)
	}
	sends := q["GET /admin/api/sends"]
	for _, name := range []string{"app", "phone", "ip", "status", "from", "to", "limit", "cursor"} {
		if !sends[name] {
			t.Errorf("GET /admin/api/sends: %q is missing from %v", name, sends)
		}
	}
	if limits := q["DELETE /admin/api/limits"]; !limits["phone"] || !limits["ip"] || limits["X-CSRF-Token"] {
		t.Errorf("DELETE /admin/api/limits: got %v, want phone and ip from the components and no header", limits)
	}
	if _, err := readAPIQuery([]byte(`{"paths":{"/x":{"get":{"parameters":[{"$ref":"#/components/parameters/Nope"}]}}}}`)); err == nil {
		t.Error("a reference to a missing component was read")
	}
}
