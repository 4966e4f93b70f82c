package deploy

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// notInDevMode are the metrics the queries read that a dev-mode server cannot show after
// a short scenario, each with its label names and why. The test checks that each is
// declared in internal/metrics with those labels, and that the scenario indeed lacks it
// (so the list shrinks when the scenario learns to make one).
var notInDevMode = map[string]struct {
	labels []string
	why    string
}{
	"otpgate_outcome_queue_depth":            {nil, "the outcome writer is PostgreSQL's"},
	"otpgate_outcome_lost_total":             {nil, "the outcome writer is PostgreSQL's"},
	"otpgate_sweeper_oldest_sending_seconds": {nil, "the sweeper runs on PostgreSQL only"},
	"otpgate_retention_behind_seconds":       {[]string{"table"}, "dev mode runs no retention"},
	"otpgate_fraud_blocks_active":            {[]string{"scope", "mode"}, "reported once the guard blocks a target"},
	"otpgate_fraud_blocks_started_total":     {[]string{"scope", "mode"}, "counted once the guard blocks a target"},
}

// TestQueriesReadExposedMetrics runs the server in dev mode through a short scenario
// (sends created after a provider refused them, duplicated, rate limited, over a shadow
// budget; a wrong code and a right one; refused receipts), scrapes its /metrics, and
// checks that every query of the rules and the dashboard names only metrics and labels
// found there, or in notInDevMode.
func TestQueriesReadExposedMetrics(t *testing.T) {
	provider := failingProvider(t)
	s := startDevServer(t, map[string]string{
		// Every send tries the refusing webhook first, then fails over to the log sender.
		"SMS_PROVIDERS":           "hook:webhook,log",
		"SMS_WEBHOOK_URL_HOOK":    provider.URL,
		"SMS_WEBHOOK_SECRET_HOOK": "scenario-webhook-secret",
		// The test is its own proxy: X-Forwarded-For names a second client.
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32",
	})
	scenario(t, s)
	have := s.scrape(t)

	for name, decl := range notInDevMode {
		if _, ok := have[name]; ok {
			t.Errorf("%s is on /metrics after the scenario: remove it from notInDevMode", name)
		}
		checkDeclared(t, name, decl.labels)
		l := map[string]bool{}
		for _, k := range decl.labels {
			l[k] = true
		}
		have[name] = l
	}
	for _, p := range checkQueries(allQueries(t), recordings(t), have) {
		t.Error(p)
	}
}

// scenario makes the server count what the queries read.
func scenario(t *testing.T, s *devServer) {
	t.Helper()
	admin := map[string]string{"Authorization": "Bearer " + s.token}
	// A shadow budget far below one message's price: sends set its gauge and overrun it.
	var cfg map[string]any
	if err := json.Unmarshal(s.expect(t, http.StatusOK, http.MethodGet, s.admin+"/admin/api/spend/config", nil, admin), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["budgets"] = []map[string]any{{"name": "scenario", "daily": "0.000001", "mode": "shadow"}}
	s.expect(t, http.StatusOK, http.MethodPut, s.admin+"/admin/api/spend/config", cfg, admin)

	send := s.api + "/v1/verifications"
	s.expect(t, http.StatusCreated, http.MethodPost, send, map[string]any{"phone": "+819012345678", "locale": "en"}, nil)
	s.expect(t, http.StatusConflict, http.MethodPost, send, map[string]any{"phone": "+819012345678", "locale": "en"}, nil)
	s.expect(t, http.StatusTooManyRequests, http.MethodPost, send, map[string]any{"phone": "+819012345679"}, nil)
	s.expect(t, http.StatusUnprocessableEntity, http.MethodPost, send, map[string]any{"phone": "12"}, nil)
	// A wrong code: one in a million it is the right one, and the check answers 200.
	if got, b := s.do(t, http.MethodPost, send+"/check", map[string]any{"phone": "+819012345678", "code": "000000"}, nil); got != http.StatusUnprocessableEntity && got != http.StatusOK {
		t.Fatalf("check: got %d, want 422\n%s", got, b)
	}
	// Another client, so the IP rule that refused the second number above does not; the
	// code the log sender printed approves its verification.
	other := map[string]string{"X-Forwarded-For": "192.0.2.10"}
	s.expect(t, http.StatusCreated, http.MethodPost, send, map[string]any{"phone": "+447911123456"}, other)
	s.expect(t, http.StatusOK, http.MethodPost, send+"/check", map[string]any{"phone": "+447911123456", "code": s.code(t, "+447911123456")}, other)
	// Receipts: for an instance that takes none, and forged.
	s.expect(t, http.StatusNotFound, http.MethodPost, s.api+"/v1/receipts/webhook/nope", map[string]any{"id": "x", "status": "delivered"}, nil)
	s.expect(t, http.StatusForbidden, http.MethodPost, s.api+"/v1/receipts/webhook/hook", map[string]any{"id": "x", "status": "delivered"},
		map[string]string{"Otpgate-Signature": "t=1,v1=00"})
}

// checkDeclared: name and its labels are string literals of one file of internal/metrics,
// where every metric is registered.
func checkDeclared(t *testing.T, name string, labels []string) {
	t.Helper()
	files, err := filepath.Glob("../internal/metrics/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("internal/metrics: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if !strings.Contains(src, `"`+name+`"`) {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(src, `"`+l+`"`) {
				t.Errorf("%s: declared in %s without the label %s", name, f, l)
			}
		}
		return
	}
	t.Errorf("%s: not declared in internal/metrics", name)
}
