package inproc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/server/servertest"
	"otpgate/internal/sms"
)

// TestOutboundPolicyThroughTheServer: a production server without OTP_OUTBOUND_ALLOW
// refuses webhook endpoints that lead to special addresses, naming the field and storing
// nothing, and its test-send does not connect to one that is stored all the same (added
// by an instance that allow-lists it, or a name that now resolves there).
func TestOutboundPolicyThroughTheServer(t *testing.T) {
	p := servertest.NewProvider(t)
	rc := eventstest.New(t, servertest.HookSecret)
	dsn := servertest.ProdEnv(t, p, nil)["DATABASE_URL"]
	strict := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"DATABASE_URL": dsn, "SMS_PROVIDER": "log", "OTP_OUTBOUND_ALLOW": ""}))
	c := hookClient(t)
	hooks := "/admin/api/apps/default/webhooks"

	t.Run("RegistrationRefusesSpecialAddresses", func(t *testing.T) {
		for _, u := range []string{
			rc.URL, strict.Admin + "/admin/api/apps", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]:8081/",
			"http://localhost:8081/", "http://10.0.0.1/", "http://100.64.0.1/", "http://0.0.0.0:8080/", "http://2130706433/",
			// Refused whether or not they resolve: to a special address if they do.
			"http://localhost.:9/", "http://127.0.0.1.nip.io:9/", "http://metadata.google.internal/",
		} {
			r := hookCall(t, c, strict, http.MethodPost, hooks, map[string]any{"url": u, "event_types": []string{events.SendBlocked}})
			errs, _ := r.Body["errors"].(map[string]any)
			if r.Status != http.StatusBadRequest || r.Str("code") != "invalid_request" || errs["url"] == nil {
				t.Errorf("%s: got %d %s, want 400 invalid_request naming url", u, r.Status, r.Raw)
			}
		}
		r := hookCall(t, c, strict, http.MethodGet, hooks, nil)
		if list, _ := r.Body["webhooks"].([]any); r.Status != http.StatusOK || len(list) != 0 {
			t.Errorf("got %s, want no endpoints", r.Raw)
		}
	})

	t.Run("TestSendDoesNotConnectToAStoredSpecialAddress", func(t *testing.T) {
		lax := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"DATABASE_URL": dsn}))
		ep := addHook(t, c, lax, "default", rc.URL, events.SendBlocked)
		r := hookCall(t, c, strict, http.MethodPost, hooks+"/"+ep+"/test", nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		if r.Body["delivered"] != false || !strings.Contains(r.Str("error"), "loopback") {
			t.Errorf("got %s, want not delivered, refused as loopback", r.Raw)
		}
		if n := len(rc.Events()); n != 0 {
			t.Errorf("the receiver got %d events, want none", n)
		}
		// The instance that allow-lists loopback still reaches it.
		if r := hookCall(t, c, lax, http.MethodPost, hooks+"/"+ep+"/test", nil); r.Body["delivered"] != true {
			t.Errorf("allow-listed: got %s, want delivered", r.Raw)
		}
	})
}

// postCallback posts a webhook receipt and decodes the problem, if any.
func postCallback(t *testing.T, in *servertest.Instance, path, body, signature string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, in.API+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sms.SignatureHeader, signature)
	resp, err := servertest.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	var problem map[string]any
	_ = json.Unmarshal(raw.Bytes(), &problem)
	return resp.StatusCode, problem
}

// TestReceiptRefusalsThroughTheServer: a callback for an instance that does not exist
// says so; forged ones are each counted and logged once a minute, not once each.
func TestReceiptRefusalsThroughTheServer(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, nil))
	body := `{"id":"0190aaaa-0000-7000-8000-000000000001","status":"delivered"}`

	st, problem := postCallback(t, in, "/v1/receipts/webhook/nosuch", body, sms.Sign(p.Secret, time.Now(), []byte(body)))
	if detail, _ := problem["detail"].(string); st != http.StatusNotFound || problem["code"] != "not_found" || !strings.Contains(detail, "no such provider instance") {
		t.Errorf("unknown instance: got %d %v, want 404 not_found saying there is no such provider instance", st, problem)
	}

	for range 5 {
		if st, problem := postCallback(t, in, "/v1/receipts/webhook/webhook", body, sms.Sign("not-the-secret", time.Now(), []byte(body))); st != http.StatusForbidden {
			t.Fatalf("forged: got %d %v, want 403", st, problem)
		}
	}
	metrics := scrapeMetrics(t, in)
	for _, want := range []string{
		`otpgate_receipts_rejected_total{kind="webhook",reason="invalid_signature"} 5`,
		`otpgate_receipts_rejected_total{kind="webhook",reason="unknown_instance"} 1`,
		`otpgate_receipts_rejected_total{kind="twilio",reason="invalid_signature"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, grep(metrics, "otpgate_receipts_rejected_total"))
		}
	}
	if n := strings.Count(in.Stderr.String(), "bad signature"); n != 1 {
		t.Errorf("got %d warnings for 5 forged callbacks, want 1:\n%s", n, in.Stderr.String())
	}
}
