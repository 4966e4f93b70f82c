package http

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

func TestRequestID(t *testing.T) {
	h, _ := newTestServer(t, &stubVerifier{}, nil)
	tests := []struct {
		name, incoming string
		kept           bool
	}{
		{"SaneIDIsKept", "abc-123_X.y:z", true},
		{"Base64IsKept", "q83v/A+b9=", true},
		{"SpacesAreReplaced", "abc 123", false},
		{"QuotesAreReplaced", `abc"123`, false},
		{"TooLongIsReplaced", strings.Repeat("a", httpkit.MaxRequestIDLen+1), false},
		{"MissingIsGenerated", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(t, h, request{method: "GET", path: "/healthz", header: map[string]string{"X-Request-Id": tt.incoming}})
			got := w.Header().Get("X-Request-Id")
			if tt.kept && got != tt.incoming {
				t.Errorf("got %v, want %v", got, tt.incoming)
			}
			if !tt.kept && (got == tt.incoming || !httpkit.SaneRequestID(got)) {
				t.Errorf("got %q, want a fresh id", got)
			}
		})
	}
}

func TestAccessLog(t *testing.T) {
	var observed []string
	v := &stubVerifier{}
	h, logs := newTestServer(t, v, func(d *Deps) {
		d.Observe = func(route string, status int, _ time.Duration) {
			observed = append(observed, route+" "+http.StatusText(status))
		}
	})
	post(t, h, "/v1/verifications/check", `{"phone":"+819012345678","code":"987654"}`, map[string]string{
		"X-Request-Id": "req-1", "Authorization": "Bearer s3cret-token", "Idempotency-Key": "idem-key-1",
	})
	do(t, h, request{method: "GET", path: "/no/such/path?phone=1"})

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log lines: got %v, want %v:\n%s", len(lines), 2, logs)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"msg": "request", "method": "POST", "route": "/v1/verifications/check", "status": 200.0,
		"client_ip": "192.0.2.1", "request_id": "req-1"}
	for k, wv := range want {
		if line[k] != wv {
			t.Errorf("%s: got %v, want %v", k, line[k], wv)
		}
	}
	if _, ok := line["duration"]; !ok {
		t.Error("duration: got none, want one")
	}
	if line["bytes"].(float64) <= 0 {
		t.Errorf("bytes: got %v, want the body's size", line["bytes"])
	}
	for _, secret := range []string{"987654", "s3cret", "819012345678", "idem-key-1", "/no/such/path", "phone=1"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
	if !strings.Contains(lines[1], `"route":"unmatched"`) {
		t.Errorf("unknown path: got %s, want route unmatched", lines[1])
	}
	if strings.Join(observed, ",") != "/v1/verifications/check OK,unmatched Not Found" {
		t.Errorf("observed: got %v", observed)
	}
}

func TestRecoverPanics(t *testing.T) {
	v := &stubVerifier{check: func(context.Context, otp.CheckInput) (otp.CheckResult, error) { panic("kaboom") }}
	h, logs := newTestServer(t, v, nil)
	w := post(t, h, "/v1/verifications/check", `{"phone":"1","code":"123456"}`, map[string]string{"X-Request-Id": "req-p"})
	p := decodeProblem(t, w)
	if w.Code != 500 || p.Code != "internal" {
		t.Errorf("got %v %v, want 500 internal", w.Code, p.Code)
	}
	if strings.Contains(w.Body.String(), "kaboom") {
		t.Errorf("body %s leaks the panic", w.Body)
	}
	for _, want := range []string{`"msg":"panic serving request","request_id":"req-p","panic":"kaboom","stack":"goroutine`, `"status":500`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs: want %s in\n%s", want, logs)
		}
	}
}

func TestRoutingProblems(t *testing.T) {
	h, _ := newTestServer(t, &stubVerifier{}, nil)
	t.Run("UnknownPathIs404Problem", func(t *testing.T) {
		w := do(t, h, request{method: "GET", path: "/v2/nothing"})
		if p := decodeProblem(t, w); w.Code != 404 || p.Code != "not_found" {
			t.Errorf("got %v %v, want 404 not_found", w.Code, p.Code)
		}
	})
	t.Run("WrongMethodIs405ProblemWithAllow", func(t *testing.T) {
		w := do(t, h, request{method: "GET", path: "/v1/verifications"})
		if p := decodeProblem(t, w); w.Code != 405 || p.Code != "method_not_allowed" {
			t.Errorf("got %v %v, want 405 method_not_allowed", w.Code, p.Code)
		}
		if got := w.Header().Values("Allow"); strings.Join(got, ",") != "POST" {
			t.Errorf("Allow: got %v, want POST", got)
		}
		if w.Header().Get("RateLimit") != "" {
			t.Error("RateLimit: got one on a GET, want none")
		}
	})
	t.Run("PostToHealthzIs405", func(t *testing.T) {
		w := do(t, h, request{method: "POST", path: "/healthz", body: "{}"})
		if w.Code != 405 || strings.Join(w.Header().Values("Allow"), ",") != "GET" {
			t.Errorf("got %v Allow %v, want 405 Allow GET", w.Code, w.Header().Values("Allow"))
		}
	})
}

func TestHealth(t *testing.T) {
	t.Run("HealthzIsAlwaysOK", func(t *testing.T) {
		h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) {
			d.Ready = func(context.Context) error { return errors.New("redis down") }
		})
		w := do(t, h, request{method: "GET", path: "/healthz"})
		if w.Code != 200 || w.Body.String() != `{"status":"ok"}`+"\n" {
			t.Errorf("got %v %s, want 200 {\"status\":\"ok\"}", w.Code, w.Body)
		}
	})
	t.Run("ReadyzIsOKWhenReady", func(t *testing.T) {
		h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Ready = func(context.Context) error { return nil } })
		if w := do(t, h, request{method: "GET", path: "/readyz"}); w.Code != 200 {
			t.Errorf("got %v, want %v", w.Code, 200)
		}
	})
	t.Run("ReadyzIs503WhenNotReady", func(t *testing.T) {
		var deadline bool
		h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) {
			d.Ready = func(ctx context.Context) error {
				_, deadline = ctx.Deadline()
				return errors.New("postgres: connection refused")
			}
		})
		w := do(t, h, request{method: "GET", path: "/readyz"})
		if p := decodeProblem(t, w); w.Code != 503 || p.Code != "unavailable" {
			t.Errorf("got %v %v, want 503 unavailable", w.Code, p.Code)
		}
		if !deadline {
			t.Error("Ready got a context without deadline, want a short timeout")
		}
	})
}
