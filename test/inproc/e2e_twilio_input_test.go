package inproc

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms/smstest"
)

// twilioCall is a form post (or a GET without form) to the Twilio compatible API with a
// key of the app, sent with the given Host header when host is set.
func twilioCall(t *testing.T, in *servertest.Instance, keyID, secret, method, path string, form url.Values, host string) (int, map[string]any) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, in.API+path, body)
	req.SetBasicAuth(keyID, secret)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if host != "" {
		req.Host = host
	}
	resp, err := servertest.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %d reply is not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// TestTwilioAdapterInput holds the Twilio compatible API to what it may be given and what
// it answers: CustomFriendlyName as Twilio bounds it, PSD2 parameters refused by a service without Psd2Enabled,
// a resend's own channel, and urls built from OTP_PUBLIC_URL whatever the Host header.
func TestTwilioAdapterInput(t *testing.T) {
	const sid, token = "AC0123456789abcdef0123456789abcdef", "twilio-auth-token"
	f := smstest.NewTwilio(t, sid, token)
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"SMS_PROVIDERS": "webhook,twilio", "TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token, "TWILIO_BASE_URL": f.URL,
		"TWILIO_VOICE_FROM": "+15005550007", "SMS_ROUTES": "webhook", "OTP_PUBLIC_URL": "https://otp.example.com/gate/",
		"OTP_LIMIT_IP": "off", "OTP_LIMIT_PHONE": "10/1h", "OTP_DUPLICATE_WINDOW": "0",
	}))
	app := servertest.CreateApp(t, in, map[string]any{"name": "Twilio input", "access": "key"})
	keyID, secret := servertest.CreateKey(t, in, app, false)
	svc := "/v2/Services/VA" + strings.ReplaceAll(app, "-", "")
	call := func(method, path string, form url.Values, host string) (int, map[string]any) {
		t.Helper()
		return twilioCall(t, in, keyID, secret, method, svc+path, form, host)
	}

	t.Run("CustomFriendlyNameIsBoundedAsTwilioBoundsIt", func(t *testing.T) {
		for name, friendly := range map[string]string{
			"TooLong":    strings.Repeat("a", 31),
			"LineBreak":  "Acme\nCall +15550100",
			"Return":     "Acme\rBank",
			"NUL":        "Acme\x00",
			"Tab":        "Acme\tBank",
			"Link":       "Log in at https://acme.evil",
			"WWW":        "www.acme-login.example",
			"InvalidUTF": "Acme\xff",
			"Script":     "javascript:alert(1)",
			"Tel":        "tel:+14155550100",
			"Colon":      "Your bank: call +1",
			"Phone":      "Call (415) 555-0100",
			"ZeroWidth":  "Ac\u200bme",
			"Isolate":    "Acme\u2067knaB\u2069",
			"Filler":     "Acme\u3164Bank",
		} {
			to := servertest.NewPhone()
			st, body := call(http.MethodPost, "/Verifications", url.Values{"To": {to}, "CustomFriendlyName": {friendly}}, "")
			if code, _ := body["code"].(float64); st != http.StatusBadRequest || code != 60200 || !strings.Contains(body["message"].(string), "CustomFriendlyName") {
				t.Errorf("%s: got %d %v, want 400 60200 naming CustomFriendlyName", name, st, body)
			}
			if n := len(p.Received(to)); n != 0 {
				t.Errorf("%s: the provider got %d messages, want none", name, n)
			}
		}
		to, name := servertest.NewPhone(), strings.Repeat("Z", 30)
		if st, body := call(http.MethodPost, "/Verifications", url.Values{"To": {to}, "CustomFriendlyName": {name}}, ""); st != http.StatusCreated {
			t.Fatalf("30 characters: got %d %v, want 201", st, body)
		}
		// The number's country picks the message's language; the name is in it whatever it is.
		if got := p.Received(to); len(got) != 1 || !strings.Contains(got[0].Body, name) {
			t.Errorf("got %+v, want one message naming %s", got, name)
		}
	})

	t.Run("AmountAndPayeeOnACheckWithoutPsd2AreRefused", func(t *testing.T) {
		to := servertest.NewPhone()
		if st, body := call(http.MethodPost, "/Verifications", url.Values{"To": {to}}, ""); st != http.StatusCreated {
			t.Fatalf("create: got %d %v", st, body)
		}
		code := servertest.LastCode(t, p, to)
		for _, param := range []string{"Amount", "Payee"} {
			st, body := call(http.MethodPost, "/VerificationCheck", url.Values{"To": {to}, "Code": {code}, param: {"100"}}, "")
			if c, _ := body["code"].(float64); st != http.StatusBadRequest || c != 60200 || !strings.Contains(body["message"].(string), param) {
				t.Errorf("%s: got %d %v, want 400 60200 naming it", param, st, body)
			}
		}
		// Refused before the check: the code was not spent.
		if st, body := call(http.MethodPost, "/VerificationCheck", url.Values{"To": {to}, "Code": {code}}, ""); st != http.StatusOK || body["status"] != "approved" {
			t.Errorf("check without them: got %d %v, want approved", st, body)
		}
	})

	t.Run("AResendOnAnotherChannelReportsItsOwnChannel", func(t *testing.T) {
		to := servertest.NewPhone()
		if st, body := call(http.MethodPost, "/Verifications", url.Values{"To": {to}}, ""); st != http.StatusCreated || body["channel"] != "sms" {
			t.Fatalf("create: got %d %v, want 201 sms", st, body)
		}
		st, body := call(http.MethodPost, "/Verifications", url.Values{"To": {to}, "Channel": {"call"}}, "")
		attempts, _ := body["send_code_attempts"].([]any)
		if st != http.StatusCreated || body["channel"] != "call" || len(attempts) != 2 {
			t.Fatalf("resend by call: got %d %v, want 201, channel call, two attempts", st, body)
		}
		first, last := attempts[0].(map[string]any), attempts[1].(map[string]any)
		if first["channel"] != "sms" || last["channel"] != "call" {
			t.Errorf("attempts: got %v, want sms then call", attempts)
		}
	})

	t.Run("URLsComeFromThePublicURLNeverTheHostHeader", func(t *testing.T) {
		st, body := call(http.MethodPost, "/Verifications", url.Values{"To": {servertest.NewPhone()}}, "evil.example")
		u, _ := body["url"].(string)
		want := "https://otp.example.com/gate" + svc + "/Verifications/" + body["sid"].(string)
		if st != http.StatusCreated || u != want {
			t.Fatalf("create: got %d url %q, want %q", st, u, want)
		}
		st, body = call(http.MethodGet, "/Verifications/"+body["sid"].(string), nil, "evil.example")
		if u, _ := body["url"].(string); st != http.StatusOK || u != want {
			t.Errorf("fetch: got %d url %q, want %q", st, u, want)
		}
	})
}
