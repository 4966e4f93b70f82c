package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	otphttp "otpgate/internal/http"
)

func TestHTTPMetrics(t *testing.T) {
	m := New()
	srv := httptest.NewServer(otphttp.NewServer(otphttp.Deps{Verifier: fixedVerifier{}, Observe: m.ObserveHTTP}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/healthz", "/healthz", "/v1/+819012345678"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
	}

	t.Run("CountsByRoutePattern", func(t *testing.T) {
		if got := counter(t, m, "otpgate_http_requests_total", "route", "/healthz", "status", "200"); got != 2 {
			t.Errorf("healthz: got %v, want 2", got)
		}
		if got := observations(t, m, "otpgate_http_request_duration_seconds", "route", "/healthz"); got != 2 {
			t.Errorf("healthz observations: got %v, want 2", got)
		}
	})
	t.Run("UnknownPathIsNotALabel", func(t *testing.T) {
		if got := counter(t, m, "otpgate_http_requests_total", "route", "unmatched", "status", "404"); got != 1 {
			t.Errorf("unmatched: got %v, want 1", got)
		}
		if body := scrape(t, m); strings.Contains(body, "819012345678") {
			t.Errorf("the raw path leaked into the metrics:\n%s", body)
		}
	})
}
