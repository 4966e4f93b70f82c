package servertest

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apitest"
	"otpgate/internal/challenge"
	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/proof"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

// HookSecret signs the webhooks the tests register.
const HookSecret = "whsec_test_0123456789abcdef"

// EventsEnv makes delivery and expiry quick enough for tests.
func EventsEnv(extra map[string]string) map[string]string {
	env := map[string]string{
		"OTP_EVENTS_POLL_INTERVAL": "20ms", "OTP_EVENTS_BACKOFF": "50ms", "OTP_EVENTS_BACKOFF_MAX": "200ms",
		"OTP_EVENTS_TIMEOUT": "2s", "OTP_EXPIRE_INTERVAL": "100ms", "OTP_DUPLICATE_WINDOW": "0",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// TypesOf lists the types of the events about subject, in arrival order.
func TypesOf(evs []events.Event, subject string) []string {
	var out []string
	for _, ev := range evs {
		if eventstest.Subject(ev) == subject {
			out = append(out, ev.Type)
		}
	}
	return out
}

// TwoWebhooks is a production environment with two webhook provider instances, first
// and second, tried in that order for SMS.
func TwoWebhooks(t *testing.T, first, second *smstest.Provider, extra map[string]string) map[string]string {
	env := map[string]string{
		"SMS_PROVIDERS":            "first:webhook,second:webhook",
		"SMS_WEBHOOK_URL_FIRST":    first.URL,
		"SMS_WEBHOOK_SECRET_FIRST": first.Secret,
		"SMS_WEBHOOK_URL_SECOND":   second.URL, "SMS_WEBHOOK_SECRET_SECOND": second.Secret,
		"SMS_ROUTES":   "JP:first,second;*:second",
		"OTP_LIMIT_IP": "off",
	}
	for k, v := range extra {
		env[k] = v
	}
	return ProdEnv(t, first, env)
}

// SettledSends returns the history of an address once none of its sends is still sending.
func SettledSends(t *testing.T, in *Instance, address string) Reply {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := AdminCall(t, in, http.MethodGet, "/admin/api/sends?phone="+url.QueryEscape(address), nil)
		WantStatus(t, r, http.StatusOK, "")
		if !strings.Contains(r.Raw, `"send_status":"sending"`) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("sends of %s stayed sending: %s", address, r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ChallengeOf reads the challenge a refusal carries.
func ChallengeOf(t *testing.T, r Reply) proof.Challenge {
	t.Helper()
	c, ok := r.Body["challenge"].(map[string]any)
	if !ok {
		t.Fatalf("got %d %s without a challenge: %s", r.Status, r.Str("code"), r.Raw)
	}
	s := func(k string) string { v, _ := c[k].(string); return v }
	n, _ := c["maxnumber"].(float64)
	return proof.Challenge{Algorithm: s("algorithm"), Challenge: s("challenge"), MaxNumber: int(n), Salt: s("salt"), Signature: s("signature")}
}

// SendSolved sends again with the solution of ch.
func SendSolved(t *testing.T, in *Instance, phone string, ch proof.Challenge, headers ...string) Reply {
	t.Helper()
	solution, ok := challenge.Solve(ch)
	if !ok {
		t.Fatalf("cannot solve %+v", ch)
	}
	return Post(t, in.API+"/v1/verifications", map[string]string{"phone": phone, "altcha": solution}, headers...)
}

// PostReceipt posts a signed (or forged) webhook receipt and returns the status,
// checking the exchange against the public document.
func PostReceipt(t *testing.T, in *Instance, instance, body, signature string) int {
	t.Helper()
	u := in.API + "/v1/receipts/webhook/" + instance
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sms.SignatureHeader, signature)
	resp, err := Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	x := apitest.Exchange{Request: req, RequestBody: []byte(body), Status: resp.StatusCode, Header: resp.Header, Body: raw.Bytes()}
	if _, err := apitest.Public().Check(x); err != nil {
		t.Errorf("openapi: %v", err)
	}
	return resp.StatusCode
}

// Charts reads what the console shows of the last four days: hourly and daily charts of
// every app and of the default one, and the conversion figures per prefix and per country.
func Charts(t *testing.T, in *Instance, since time.Time) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	s := url.QueryEscape(since.Format(time.RFC3339))
	for _, path := range []string{
		"/admin/api/stats?bucket=1h&since=" + s, "/admin/api/stats?bucket=1d&since=" + s,
		"/admin/api/stats?bucket=1h&app=default&since=" + s,
		"/admin/api/fraud/conversion?by=prefix&since=" + s, "/admin/api/fraud/conversion?by=country&since=" + s,
	} {
		r := AdminCall(t, in, http.MethodGet, path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: got %d %s", path, r.Status, r.Raw)
		}
		list, _ := r.Body["buckets"].([]any)
		if rows, ok := r.Body["rows"].([]any); ok {
			list = rows
		}
		out[path] = list
	}
	return out
}

// BasicAuth is the credential of an Authorization: Basic header.
func BasicAuth(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}
