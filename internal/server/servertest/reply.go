package servertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"otpgate/internal/apitest"
)

// Reply is one decoded response.
type Reply struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// Str is the string at k in the body, or "".
func (r Reply) Str(k string) string {
	s, _ := r.Body[k].(string)
	return s
}

// Num is the number at k in the body, or 0.
func (r Reply) Num(k string) float64 {
	n, _ := r.Body[k].(float64)
	return n
}

// Client posts JSON to one instance.
var Client = &http.Client{Timeout: 30 * time.Second}

// Post sends body as JSON and checks the exchange against the public OpenAPI document.
func Post(t testing.TB, url string, body any, headers ...string) Reply {
	t.Helper()
	var buf []byte
	switch b := body.(type) {
	case string:
		buf = []byte(b)
	default:
		var err error
		if buf, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := Client.Do(req)
	if err != nil {
		t.Errorf("POST %s: %v", url, err)
		return Reply{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	x := apitest.Exchange{Request: req, RequestBody: buf, Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if _, err := apitest.Public().Check(x); err != nil {
		t.Errorf("openapi: %v\nbody: %s", err, raw)
	}
	r := Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Errorf("POST %s: %d reply is not JSON: %q", url, resp.StatusCode, raw)
		}
	}
	return r
}

// Send asks the public API for a code to phone.
func Send(t testing.TB, in *Instance, phone string, headers ...string) Reply {
	t.Helper()
	return Post(t, in.API+"/v1/verifications", map[string]string{"phone": phone}, headers...)
}

// Check checks a code through the public API.
func Check(t testing.TB, in *Instance, body map[string]string, headers ...string) Reply {
	t.Helper()
	return Post(t, in.API+"/v1/verifications/check", body, headers...)
}

// WantStatus fails the test unless r has status and, when code is not "", that problem code.
func WantStatus(t testing.TB, r Reply, status int, code string) {
	t.Helper()
	if r.Status != status || (code != "" && r.Str("code") != code) {
		t.Fatalf("got %d %s, want %d %s; body %s", r.Status, r.Str("code"), status, code, r.Raw)
	}
}
