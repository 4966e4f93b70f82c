package inproc

import (
	"net/http"
	"strings"
	"testing"

	"otpgate/internal/server/servertest"
)

func TestTemplatesPerAppAndLocale(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"OTP_LIMIT_IP": "off"}))

	app := servertest.CreateApp(t, in, map[string]any{
		"name": "Shop", "webotp_domain": "shop.example.com", "android_app_hash": "FA+9qCX9VSu",
		"templates": map[string]any{"ja": map[string]string{"sms": "{{.App}}の認証コードは{{.Code}}です（{{.Minutes}}分間有効）"}},
	})
	got := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/"+app, nil)
	if !strings.Contains(got.Raw, `"templates":{"ja":{"sms":"{{.App}}の認証コードは{{.Code}}です（{{.Minutes}}分間有効）"}}`) ||
		!strings.Contains(got.Raw, `"webotp_domain":"shop.example.com"`) || !strings.Contains(got.Raw, `"android_app_hash":"FA+9qCX9VSu"`) {
		t.Fatalf("got %s, want the app's templates and SMS options", got.Raw)
	}

	t.Run("AppTemplateWithRetrieverHashAndWebOTPLine", func(t *testing.T) {
		phone := servertest.NewPhone()
		r := servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications", map[string]string{"phone": phone, "locale": "JA"})
		servertest.WantStatus(t, r, http.StatusCreated, "")
		code := servertest.LastCode(t, p, phone)
		want := "Shopの認証コードは" + code + "です（5分間有効）\nFA+9qCX9VSu\n@shop.example.com #" + code
		if body := p.Received(phone)[0].Body; body != want {
			t.Errorf("got %q, want %q", body, want)
		}
		rows := servertest.SettledSends(t, in, phone)
		if !strings.Contains(rows.Raw, `"encoding":"UCS-2","segments":1`) || !strings.Contains(rows.Raw, `"channel":"sms","country":"JP"`) {
			t.Errorf("history: got %s, want a one-segment UCS-2 SMS to JP", rows.Raw)
		}
	})

	t.Run("BuiltInTemplateOfAnotherLocale", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications", map[string]string{"phone": phone, "locale": "fr"}), http.StatusCreated, "")
		code := servertest.LastCode(t, p, phone)
		want := "Shop : Votre code de vérification est " + code + ". Il expire dans 5 minutes. Ne le communiquez à personne.\nFA+9qCX9VSu\n@shop.example.com #" + code
		if body := p.Received(phone)[0].Body; body != want {
			t.Errorf("got %q, want %q", body, want)
		}
	})

	t.Run("DefaultAppSMSIsOneGSM7Segment", func(t *testing.T) {
		phone := servertest.NewPhone()
		servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/verifications", map[string]string{"phone": phone, "locale": "en"}), http.StatusCreated, "")
		if rows := servertest.SettledSends(t, in, phone); !strings.Contains(rows.Raw, `"encoding":"GSM-7","segments":1`) {
			t.Errorf("history: got %s, want one GSM-7 segment", rows.Raw)
		}
		body := scrapeMetrics(t, in)
		// The French SMS of the app and this one.
		for _, want := range []string{`otpgate_sms_total{encoding="GSM-7"} 2`, `otpgate_sms_total{encoding="UCS-2"} 1`, `otpgate_sms_segments_total{encoding="GSM-7"} 2`} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %q:\n%s", want, grep(body, "otpgate_sms_"))
			}
		}
	})

	t.Run("UnknownLocaleIs400AndSendsNothing", func(t *testing.T) {
		before := len(p.Received(""))
		r := servertest.Post(t, in.API+"/v1/verifications", map[string]string{"phone": servertest.NewPhone(), "locale": "tlh"})
		servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
		if errs, _ := r.Body["errors"].(map[string]any); errs["locale"] == nil {
			t.Errorf("got %s, want the locale named", r.Raw)
		}
		if len(p.Received("")) != before {
			t.Errorf("something was sent")
		}
	})

	t.Run("BadTemplateIsRefusedWhenSet", func(t *testing.T) {
		for _, c := range []struct {
			templates map[string]any
			field     string
		}{
			{map[string]any{"ja": map[string]string{"sms": "{{.Cod}}"}}, "templates.ja.sms"},
			{map[string]any{"en": map[string]string{"voice": "Your code {{.Code"}}, "templates.en.voice"},
			{map[string]any{"de": map[string]string{"email_text": "no code here"}}, "templates.de.email_text"},
			{map[string]any{"xx": map[string]string{"sms": "{{.Code}}"}}, "templates"},
		} {
			r := servertest.AdminCall(t, in, http.MethodPatch, "/admin/api/apps/"+app, map[string]any{"templates": c.templates})
			servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
			if errs, _ := r.Body["errors"].(map[string]any); errs[c.field] == nil {
				t.Errorf("%v: got %s, want %s named", c.templates, r.Raw, c.field)
			}
		}
		for _, bad := range []map[string]any{{"webotp_domain": "https://shop.example.com"}, {"android_app_hash": "short"}} {
			servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodPatch, "/admin/api/apps/"+app, bad), http.StatusBadRequest, "invalid_request")
		}
		if again := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/"+app, nil); again.Raw != got.Raw {
			t.Errorf("a refused change changed the app:\n%s\nwas\n%s", again.Raw, got.Raw)
		}
	})
}
