package twilioapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/psd2"
	"otpgate/internal/rate"
	"otpgate/internal/twilioapi"
)

const (
	appID = "01900000-0000-7000-8000-000000000001"
	vID   = "01900000-0000-7000-8000-0000000000aa"
)

// stub answers every call for one key app and records the domain calls.
type stub struct {
	send   func(otp.SendInput) (otp.SendResult, error)
	sends  []otp.SendInput
	checks []otp.CheckInput
}

func (s *stub) Send(_ context.Context, in otp.SendInput) (otp.SendResult, error) {
	s.sends = append(s.sends, in)
	return s.send(in)
}

func (s *stub) Check(_ context.Context, in otp.CheckInput) (otp.CheckResult, error) {
	s.checks = append(s.checks, in)
	return otp.CheckResult{Verification: pending(1)}, nil
}

func (s *stub) SendLimitState(context.Context, string) (rate.Decision, error) {
	return rate.Decision{}, nil
}

func (s *stub) Verification(context.Context, *otp.App, string) (otp.Verification, error) {
	return pending(1), nil
}

func (s *stub) Close(context.Context, *otp.App, string, otp.Status) (otp.Verification, error) {
	return otp.Verification{}, otp.ErrNotFound
}

func (s *stub) App(context.Context, string) (otp.App, error) {
	return otp.App{ID: appID, Access: otp.AccessKey, CodeTTL: 5 * time.Minute}, nil
}

func (s *stub) Authenticate(context.Context, string, string) (apps.Key, error) {
	return apps.Key{ID: "SK1", AppID: appID}, nil
}

func pending(sends int) otp.Verification {
	now := time.Now().UTC()
	return otp.Verification{ID: vID, AppID: appID, Address: "+15551234567", Channel: otp.ChannelSMS, Status: otp.StatusPending,
		Sends: sends, CreatedAt: now, ExpiresAt: now.Add(5 * time.Minute)}
}

func newAPI(s *stub, publicURL string) http.Handler {
	return twilioapi.NewHandler(twilioapi.Deps{
		Verifier: s, Manager: s, Apps: s, PublicURL: publicURL,
		ClientIP: func(*http.Request, apps.Key) (string, error) { return "192.0.2.1", nil },
	})
}

var service = "/Services/" + apps.ServiceSID(appID)

// call serves one request (a form post, or a GET when form is nil) with Host evil.example.
func call(t *testing.T, h http.Handler, method, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	var r *http.Request
	if form == nil {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.Host = "evil.example"
	r.SetBasicAuth("SK1", "secret")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d %q is not JSON", method, path, w.Code, w.Body)
	}
	return w.Code, out
}

func TestURLsNeverComeFromTheHostHeader(t *testing.T) {
	s := &stub{send: func(otp.SendInput) (otp.SendResult, error) {
		return otp.SendResult{Verification: pending(1), Created: true}, nil
	}}
	path := "/v2/Services/" + apps.ServiceSID(appID) + "/Verifications/" + apps.VerificationSID(vID)
	for public, want := range map[string]string{
		"https://otp.example.com/": "https://otp.example.com" + path,
		"https://example.com/otp":  "https://example.com/otp" + path,
		"":                         path,
	} {
		h := newAPI(s, public)
		_, created := call(t, h, http.MethodPost, service+"/Verifications", url.Values{"To": {"+15551234567"}})
		_, fetched := call(t, h, http.MethodGet, service+"/Verifications/"+apps.VerificationSID(vID), nil)
		if created["url"] != want || fetched["url"] != want {
			t.Errorf("OTP_PUBLIC_URL %q: got %v and %v, want %s", public, created["url"], fetched["url"], want)
		}
	}
}

func TestPSD2ParametersReachTheDomain(t *testing.T) {
	payment := psd2.Transaction{Amount: "€39.99", Payee: "Acme Inc."}
	s := &stub{send: func(in otp.SendInput) (otp.SendResult, error) {
		v := pending(1)
		v.Transaction = in.Transaction
		return otp.SendResult{Verification: v, Created: true}, nil
	}}
	h := newAPI(s, "")
	st, body := call(t, h, http.MethodPost, service+"/Verifications", url.Values{"To": {"+15551234567"}, "Amount": {payment.Amount}, "Payee": {payment.Payee}})
	if st != http.StatusCreated || body["amount"] != payment.Amount || body["payee"] != payment.Payee {
		t.Errorf("create: got %d %v, want 201 showing the amount and payee", st, body)
	}
	call(t, h, http.MethodPost, service+"/VerificationCheck", url.Values{"To": {"+15551234567"}, "Code": {"123456"}, "Amount": {payment.Amount}, "Payee": {payment.Payee}})
	if len(s.sends) != 1 || s.sends[0].Transaction != payment || len(s.checks) != 1 || s.checks[0].Transaction != payment {
		t.Errorf("the service got sends %+v and checks %+v, want both with %+v", s.sends, s.checks, payment)
	}
	// Without them, Twilio's answer has null, not "".
	st, body = call(t, h, http.MethodPost, service+"/Verifications", url.Values{"To": {"+15551234567"}})
	if v, ok := body["amount"]; st != http.StatusCreated || !ok || v != nil {
		t.Errorf("create without: got %d %v, want amount null", st, body)
	}
}

func TestTransactionProblemsNameTheTwilioParameters(t *testing.T) {
	s := &stub{send: func(otp.SendInput) (otp.SendResult, error) {
		return otp.SendResult{}, &otp.ErrInvalidRequest{Fields: map[string]string{"amount": "is required: the app has PSD2 enabled", "payee": "must be at most 64 characters"}}
	}}
	st, body := call(t, newAPI(s, ""), http.MethodPost, service+"/Verifications", url.Values{"To": {"+15551234567"}})
	want := "Invalid parameter `Amount` is required: the app has PSD2 enabled; `Payee` must be at most 64 characters"
	if st != http.StatusBadRequest || body["code"] != float64(60200) || body["message"] != want {
		t.Errorf("got %d %v, want 400 60200 %q", st, body, want)
	}
}

func TestAResendShowsItsOwnChannel(t *testing.T) {
	s := &stub{send: func(otp.SendInput) (otp.SendResult, error) {
		return otp.SendResult{Verification: pending(3), Channel: otp.ChannelVoice}, nil
	}}
	st, body := call(t, newAPI(s, ""), http.MethodPost, service+"/Verifications", url.Values{"To": {"+15551234567"}, "Channel": {"call"}})
	attempts, _ := body["send_code_attempts"].([]any)
	if st != http.StatusCreated || body["channel"] != "call" || len(attempts) != 3 {
		t.Fatalf("got %d %v, want 201, channel call, three attempts", st, body)
	}
	for i, want := range []string{"sms", "sms", "call"} {
		if got := attempts[i].(map[string]any)["channel"]; got != want {
			t.Errorf("attempt %d: got %v, want %s", i, got, want)
		}
	}
}

func TestFriendlyNameProblemsNameTheTwilioParameter(t *testing.T) {
	s := &stub{send: func(otp.SendInput) (otp.SendResult, error) {
		return otp.SendResult{}, &otp.ErrInvalidRequest{Fields: map[string]string{"friendly_name": "must be at most 30 characters"}}
	}}
	st, body := call(t, newAPI(s, ""), http.MethodPost, service+"/Verifications", url.Values{"To": {"+15551234567"}, "CustomFriendlyName": {strings.Repeat("a", 31)}})
	if st != http.StatusBadRequest || body["code"] != float64(60200) || body["message"] != "Invalid parameter `CustomFriendlyName` must be at most 30 characters" {
		t.Errorf("got %d %v, want 400 60200 naming CustomFriendlyName", st, body)
	}
	if len(s.sends) != 1 || s.sends[0].FriendlyName != strings.Repeat("a", 31) {
		t.Errorf("the service got %+v, want the name as given", s.sends)
	}
}
