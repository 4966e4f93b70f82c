package inproc

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	verify "github.com/twilio/twilio-go/rest/verify/v2"

	"otpgate/internal/email/emailtest"
	"otpgate/internal/server/servertest"
	"otpgate/internal/sms/smstest"
)

// mailCode is the code in the text part of the newest message to an address.
func mailCode(t *testing.T, mb *emailtest.Mailbox, to string) (emailtest.Parsed, string) {
	t.Helper()
	for _, m := range slicesReverse(mb.Messages()) {
		if m.To != to {
			continue
		}
		if !m.TLS {
			t.Errorf("the message to %s came without TLS", to)
		}
		p, err := m.Parse()
		if err != nil {
			t.Fatalf("parse the message to %s: %v", to, err)
		}
		c := regexp.MustCompile(`\b\d{6}\b`).FindString(p.Parts["text/plain"])
		if c == "" || !strings.Contains(p.Parts["text/html"], c) {
			t.Fatalf("no code in both parts of %+v", p)
		}
		return p, c
	}
	t.Fatalf("no message to %s (got %d)", to, len(mb.Messages()))
	return emailtest.Parsed{}, ""
}

func slicesReverse[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestEmailEndToEnd(t *testing.T) {
	mb := emailtest.New(t, emailtest.STARTTLS, nil)
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"SMTP_URL":  "smtp://otpgate:s3cret%20pass@" + mb.Addr,
		"SMTP_FROM": "Example <no-reply@example.com>", "SMTP_CA_FILE": mb.CAFile, "OTP_LIMIT_IP": "off",
	}))
	sendTo := func(body map[string]string, headers ...string) servertest.Reply {
		t.Helper()
		return servertest.Post(t, in.API+"/v1/verifications", body, headers...)
	}

	r := sendTo(map[string]string{"email": "  Ana@Bücher.EXAMPLE ", "locale": "de"})
	servertest.WantStatus(t, r, http.StatusCreated, "")
	const addr = "Ana@xn--bcher-kva.example"
	if r.Str("email") != addr || r.Str("channel") != "email" || r.Body["phone"] != nil {
		t.Fatalf("got %s, want an email verification of %s", r.Raw, addr)
	}
	msg, code := mailCode(t, mb, addr)
	if !strings.Contains(msg.Subject, "Bestätigungscode") || !strings.Contains(msg.Parts["text/plain"], "Minuten") {
		t.Errorf("got subject %q and text %q, want German", msg.Subject, msg.Parts["text/plain"])
	}
	if len(p.Received("")) != 0 {
		t.Errorf("the SMS provider got %d messages, want none", len(p.Received("")))
	}

	t.Run("InvalidAddressIs422AndSpendsNothing", func(t *testing.T) {
		for _, bad := range []string{"ana", "ana@localhost", "a..b@example.com", "ana@exa mple.com"} {
			servertest.WantStatus(t, sendTo(map[string]string{"email": bad}), http.StatusUnprocessableEntity, "invalid_email")
		}
		if n := len(mb.Messages()); n != 1 {
			t.Errorf("got %d messages, want still 1", n)
		}
	})
	t.Run("PhoneFieldForEmailIs400", func(t *testing.T) {
		servertest.WantStatus(t, sendTo(map[string]string{"email": addr, "phone": servertest.NewPhone(), "channel": "email"}), http.StatusBadRequest, "invalid_request")
	})
	t.Run("PerAddressLimit", func(t *testing.T) {
		r := sendTo(map[string]string{"email": "Ana@BÜCHER.example"}, "User-Agent", "another-client")
		servertest.WantStatus(t, r, http.StatusTooManyRequests, "rate_limited")
		v := r.Body["violations"].([]any)[0].(map[string]any)
		if v["scope"] != "email" || v["limit"] != 1.0 || v["window_seconds"] != 60.0 {
			t.Errorf("got violation %v, want email 1/1m", v)
		}
	})
	t.Run("CheckByEmail", func(t *testing.T) {
		r := servertest.Check(t, in, map[string]string{"email": "Ana@BÜCHER.example", "code": code})
		servertest.WantStatus(t, r, http.StatusOK, "")
		if r.Str("email") != addr || r.Str("status") != "approved" {
			t.Errorf("got %s, want %s approved", r.Raw, addr)
		}
	})
	t.Run("TwilioCompatibleAPIEmails", func(t *testing.T) {
		app := servertest.CreateApp(t, in, map[string]any{"name": "Twilio email", "access": "key"})
		keyID, secret := servertest.CreateKey(t, in, app, false)
		v2 := servertest.TwilioGo(t, in.API, keyID, secret)
		svc := "VA" + strings.ReplaceAll(app, "-", "")
		v, err := v2.CreateVerification(svc, (&verify.CreateVerificationParams{}).SetTo("bo@example.com").SetChannel("email"))
		if err != nil || servertest.Str(v.Channel) != "email" || servertest.Str(v.To) != "bo@example.com" {
			t.Fatalf("Channel=email: got %+v, %v, want an email verification", v, err)
		}
		msg, code := mailCode(t, mb, "bo@example.com")
		if !strings.Contains(msg.Subject, "Twilio email") {
			t.Errorf("subject %q does not name the app", msg.Subject)
		}
		c, err := v2.CreateVerificationCheck(svc, (&verify.CreateVerificationCheckParams{}).SetTo("bo@example.com").SetCode(code))
		if err != nil || servertest.Str(c.Status) != "approved" {
			t.Errorf("check: got %+v, %v, want approved", c, err)
		}
		_, err = v2.CreateVerification(svc, (&verify.CreateVerificationParams{}).SetTo("bo@").SetChannel("email"))
		servertest.WantTwilioError(t, "bad address", err, 60200, http.StatusBadRequest)
	})
	t.Run("HistoryShowsTheAddress", func(t *testing.T) {
		rows := servertest.SettledSends(t, in, addr)
		if !strings.Contains(rows.Raw, `"phone":"`+addr+`"`) || !strings.Contains(rows.Raw, `"channel":"email"`) ||
			!strings.Contains(rows.Raw, `"provider":"smtp"`) || !strings.Contains(rows.Raw, `"provider_message_id":"`) {
			t.Errorf("got %s, want the email send to %s by smtp", rows.Raw, addr)
		}
	})
}

func TestWhatsAppAndVoiceThroughTwilio(t *testing.T) {
	const sid, token = "AC0123456789abcdef0123456789abcdef", "twilio-auth-token"
	f := smstest.NewTwilio(t, sid, token)
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"SMS_PROVIDERS": "webhook,twilio", "TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token, "TWILIO_BASE_URL": f.URL,
		"TWILIO_WHATSAPP_FROM": "+15005550006", "TWILIO_WHATSAPP_CONTENT_SID": "HX0123456789abcdef0123456789abcdef",
		"TWILIO_VOICE_FROM": "+15005550007", "SMS_ROUTES": "webhook",
		"OTP_LIMIT_IP": "off", "OTP_LIMIT_PHONE": "10/1h", "OTP_DUPLICATE_WINDOW": "0",
	}))
	phone := servertest.NewPhone()

	r := servertest.Post(t, in.API+"/v1/verifications", map[string]string{"phone": phone, "channel": "whatsapp"})
	servertest.WantStatus(t, r, http.StatusCreated, "")
	got := f.Received()
	if len(got) != 1 || got[0].Channel != "whatsapp" || got[0].To != phone || got[0].ContentSID != "HX0123456789abcdef0123456789abcdef" || got[0].Code == "" {
		t.Fatalf("twilio got %+v, want one WhatsApp content message to %s", got, phone)
	}
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": got[0].Code}), http.StatusOK, "")

	r = servertest.Post(t, in.API+"/v1/verifications", map[string]string{"phone": phone, "channel": "voice", "locale": "ja"})
	servertest.WantStatus(t, r, http.StatusCreated, "")
	got = f.Received()
	call := got[len(got)-1]
	if len(got) != 2 || call.Channel != "voice" || call.Language != "ja-JP" || call.Voice != "Polly.Mizuki" || call.From != "+15005550007" ||
		!strings.Contains(call.Body, "、") || call.Code == "" {
		t.Fatalf("twilio got %+v, want a call reading the digits in Japanese", call)
	}
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": call.Code}), http.StatusOK, "")
	if len(p.Received("")) != 0 {
		t.Errorf("the webhook got %d messages, want none: it carries SMS only", len(p.Received("")))
	}

	t.Run("TwilioCompatibleAPICallsAndTexts", func(t *testing.T) {
		app := servertest.CreateApp(t, in, map[string]any{"name": "Twilio voice", "access": "key"})
		keyID, secret := servertest.CreateKey(t, in, app, false)
		v2 := servertest.TwilioGo(t, in.API, keyID, secret)
		svc := "VA" + strings.ReplaceAll(app, "-", "")
		to := servertest.NewPhone()
		v, err := v2.CreateVerification(svc, (&verify.CreateVerificationParams{}).SetTo(to).SetChannel("call").SetLocale("es"))
		if err != nil || servertest.Str(v.Channel) != "call" || servertest.Str(v.Status) != "pending" {
			t.Fatalf("Channel=call: got %+v, %v, want a pending call verification", v, err)
		}
		got := f.Received()
		call := got[len(got)-1]
		if call.Channel != "voice" || call.To != to || call.Language != "es-US" {
			t.Fatalf("twilio got %+v, want a call in Spanish to %s", call, to)
		}
		c, err := v2.CreateVerificationCheck(svc, (&verify.CreateVerificationCheckParams{}).SetTo(to).SetCode(call.Code))
		if err != nil || servertest.Str(c.Status) != "approved" || servertest.Str(c.Channel) != "call" {
			t.Errorf("check: got %+v, %v, want approved", c, err)
		}
		_, err = v2.CreateVerification(svc, (&verify.CreateVerificationParams{}).SetTo(to).SetChannel("fax"))
		servertest.WantTwilioError(t, "Channel=fax", err, 60200, http.StatusBadRequest)
	})
}

func TestEveryChannelInDevMode(t *testing.T) {
	in := servertest.Start(t, map[string]string{"OTP_LOG_LEVEL": "info", "OTP_LIMIT_IP": "off"})
	for _, c := range []map[string]string{
		{"phone": servertest.NewPhone(), "channel": "sms"},
		{"phone": servertest.NewPhone(), "channel": "whatsapp"},
		{"phone": servertest.NewPhone(), "channel": "voice", "locale": "fr"},
		{"email": "dev@example.com"},
	} {
		r := servertest.Post(t, in.API+"/v1/verifications", c)
		servertest.WantStatus(t, r, http.StatusCreated, "")
	}
	for _, ch := range []string{"sms", "whatsapp", "voice", "email"} {
		lines := in.Stderr.Lines(ch + " not sent: log sender")
		if len(lines) != 1 {
			t.Errorf("%s: got %d log lines, want 1", ch, len(lines))
		}
	}
	if l := in.Stderr.Lines("email not sent"); len(l) == 1 && !strings.Contains(l[0], "to=dev@example.com") {
		t.Errorf("got %q, want the address", l[0])
	}
}
