package servertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"otpgate/internal/apitest"
)

// TestAdminToken is the ADMIN_TOKEN of ProdEnv.
const TestAdminToken = "test-admin-token-0123456789"

// AdminCall sends a JSON request to an instance's admin API with the admin token and
// checks the exchange against the admin OpenAPI document.
func AdminCall(t testing.TB, in *Instance, method, path string, body any) Reply {
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
	req, err := http.NewRequest(method, in.Admin+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+TestAdminToken)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	x := apitest.Exchange{Request: req, RequestBody: buf, Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if _, err := apitest.Admin().Check(x); err != nil {
		t.Errorf("openapi: %v\nbody: %s", err, raw)
	}
	r := Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: %d reply is not JSON: %q", method, path, resp.StatusCode, raw)
		}
	}
	return r
}

// CreateApp makes an app through the admin API and returns its id.
func CreateApp(t testing.TB, in *Instance, settings map[string]any) string {
	t.Helper()
	r := AdminCall(t, in, http.MethodPost, "/admin/api/apps", settings)
	WantStatus(t, r, http.StatusCreated, "")
	return r.Str("id")
}

// CreateKey makes a key of an app and returns its id and secret.
func CreateKey(t testing.TB, in *Instance, appID string, trusted bool) (id, secret string) {
	t.Helper()
	r := AdminCall(t, in, http.MethodPost, "/admin/api/apps/"+appID+"/keys", map[string]any{"name": "backend", "trusted_client_ip": trusted})
	WantStatus(t, r, http.StatusCreated, "")
	if r.Str("secret") == "" || r.Str("id") == "" {
		t.Fatalf("got %s, want a key with id and secret", r.Raw)
	}
	return r.Str("id"), r.Str("secret")
}

// AppSend sends a code to phone through an app's own send endpoint.
func AppSend(t testing.TB, in *Instance, appID, phone string, headers ...string) Reply {
	t.Helper()
	return Post(t, in.API+"/v1/apps/"+appID+"/verifications", map[string]string{"phone": phone}, headers...)
}
