package inproc

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
)

// scrapeMetrics fetches GET /metrics from the admin listener.
func scrapeMetrics(t *testing.T, in *servertest.Instance) string {
	t.Helper()
	resp, err := servertest.Client.Get(in.Admin + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: got %d, want 200; body %s", resp.StatusCode, body)
	}
	return string(body)
}

func TestMetricsOnAdminListener(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, nil))
	phone := servertest.NewPhone()
	servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
	servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusConflict, "duplicate_submit")

	body := scrapeMetrics(t, in)
	for _, want := range []string{
		`otpgate_sends_total{outcome="created"} 1`,
		`otpgate_sends_total{outcome="duplicate"} 1`,
		`otpgate_http_requests_total{route="/v1/verifications",status="201"} 1`,
		`otpgate_http_requests_total{route="/v1/verifications",status="409"} 1`,
		`otpgate_http_request_duration_seconds_count{route="/v1/verifications"} 2`,
		`otpgate_limiter_decisions_total{result="allowed"} 1`,
		`otpgate_limiter_rule_decisions_total{result="denied",rule="1/5s",scope="duplicate"} 1`,
		`otpgate_provider_duration_seconds_count{provider="webhook"} 1`,
		`otpgate_store_duration_seconds_count{op="begin_send",result="ok"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, strings.TrimPrefix(phone, "+")) {
		t.Errorf("the phone number leaked into the metrics")
	}

	t.Run("RefusedSendReachesHistory", func(t *testing.T) {
		want := "otpgate_history_written_total 1"
		deadline := time.Now().Add(10 * time.Second)
		for body := scrapeMetrics(t, in); !strings.Contains(body, want); body = scrapeMetrics(t, in) {
			if time.Now().After(deadline) {
				t.Fatalf("metrics never showed %q:\n%s", want, grep(body, "otpgate_history_"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func TestMetricsInDevMode(t *testing.T) {
	in := servertest.Start(t, map[string]string{"OTP_LOG_LEVEL": "warn"})
	servertest.WantStatus(t, servertest.Send(t, in, servertest.NewPhone()), http.StatusCreated, "")
	body := scrapeMetrics(t, in)
	for _, want := range []string{
		`otpgate_sends_total{outcome="created"} 1`,
		`otpgate_provider_errors_total{kind="unknown",provider="log"} 0`,
		"otpgate_history_queue_depth 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// Dev mode keeps history in memory until it exits: no retention job runs, whatever
	// OTP_HISTORY_RETENTION says (90d by default).
	if got := grep(body, "otpgate_retention_"); got != "" {
		t.Errorf("dev mode runs no retention, but the metrics show:\n%s", got)
	}
}

// grep returns the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
