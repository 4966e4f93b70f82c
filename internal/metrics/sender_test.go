package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

func TestSenderMetrics(t *testing.T) {
	// The receiver answers with the status its URL asks for.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var status int
		for _, s := range []int{200, 400, 503} {
			if r.URL.Query().Get("status") == strconv.Itoa(s) {
				status = s
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	webhook := func(t *testing.T, status int) otp.Sender {
		w, err := sms.NewWebhook(sms.WebhookConfig{URL: srv.URL + "/?status=" + strconv.Itoa(status), Secret: "s", Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	msg := otp.Message{ID: "1", To: "+819012345678", Body: "Your code is 123456", Locale: "en"}

	m := New()
	for _, c := range []struct {
		name    string
		status  int
		wantErr bool
	}{
		{"DeliveredIsNoError", 200, false},
		{"RefusedIsDefinite", 400, true},
		{"ServerErrorIsUnknown", 503, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := m.Sender(webhook(t, c.status))
			if s.Name() != "webhook" {
				t.Errorf("name: got %q, want webhook", s.Name())
			}
			if _, err := s.Send(context.Background(), msg); (err != nil) != c.wantErr {
				t.Fatalf("send: got %v, want error %v", err, c.wantErr)
			}
		})
	}
	if got := observations(t, m, "otpgate_provider_duration_seconds", "provider", "webhook"); got != 3 {
		t.Errorf("observations: got %v, want 3", got)
	}
	for kind, want := range map[string]float64{"definite": 1, "unknown": 1} {
		if got := counter(t, m, "otpgate_provider_errors_total", "provider", "webhook", "kind", kind); got != want {
			t.Errorf("%s errors: got %v, want %v", kind, got, want)
		}
	}
}
