package message_test

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/templates"
)

func TestLocalesAreTheDomainsLocales(t *testing.T) {
	if got, want := catalog(t).Locales(), slices.Sorted(slices.Values(contact.KnownLocales())); !slices.Equal(got, want) {
		t.Errorf("got %v, want the domain's %v", got, want)
	}
}

// TestLengthLimits renders every built-in template at its longest (a ten-digit code, a
// long app name, ten minutes) and holds each to what its channel affords.
func TestLengthLimits(t *testing.T) {
	c := catalog(t)
	for _, l := range contact.KnownLocales() {
		long := otp.MessageParams{Locale: l, Code: "1234567890", App: "Example Shop", TTL: 10 * time.Minute}
		sms := long
		sms.Channel = otp.ChannelSMS
		if out := render(t, c, sms); out.Segments > 2 {
			t.Errorf("%s: the longest SMS is %d %s segments, want at most 2", l, out.Segments, out.Encoding)
		}
		voice := long
		voice.Channel = otp.ChannelVoice
		if out := render(t, c, voice); utf8.RuneCountInString(out.Body) > 300 {
			t.Errorf("%s: a call reads %d characters, want at most 300", l, utf8.RuneCountInString(out.Body))
		}
		mail := long
		mail.Channel = otp.ChannelEmail
		if out := render(t, c, mail); utf8.RuneCountInString(out.Subject) > 78 || len(out.HTML) > 4000 {
			t.Errorf("%s: subject of %d characters and HTML of %d bytes, want at most 78 and 4000", l, utf8.RuneCountInString(out.Subject), len(out.HTML))
		}
	}
}

func TestAppTemplates(t *testing.T) {
	c := catalog(t)
	p := otp.MessageParams{Channel: otp.ChannelSMS, Locale: "ja", Code: "483920", App: "Shop", TTL: 5 * time.Minute,
		Templates: templates.Message{SMS: "{{.App}}のコード {{.Code}}（{{.Expiry}}）", EmailSubject: "{{.App}} コード"}}

	t.Run("ReplaceTheBuiltInOnesOfTheirLocale", func(t *testing.T) {
		if got := render(t, c, p).Body; got != "Shopのコード 483920（5分）" {
			t.Errorf("got %q", got)
		}
		mail := p
		mail.Channel = otp.ChannelEmail
		out := render(t, c, mail)
		if out.Subject != "Shop コード" || !strings.Contains(out.Body, "認証コード") {
			t.Errorf("got subject %q body %q, want the app's subject and the built-in body", out.Subject, out.Body)
		}
	})

	t.Run("LeaveOtherAppsAndLocalesAlone", func(t *testing.T) {
		plain := p
		plain.Templates = templates.Message{}
		if got := render(t, c, plain).Body; !strings.HasPrefix(got, "【Shop】認証コード: 483920") {
			t.Errorf("without templates: got %q, want the built-in one", got)
		}
		for i := range 3 { // parsed once, then kept
			if got := render(t, c, p).Body; got != "Shopのコード 483920（5分）" {
				t.Errorf("render %d: got %q", i, got)
			}
		}
	})

	t.Run("OnesThatDoNotRunFail", func(t *testing.T) {
		bad := p
		bad.Templates.SMS = "{{.Nope}}"
		if _, err := c.Render(bad); err == nil {
			t.Error("got no error for a template naming an unknown field")
		}
	})
}

func TestTemplateCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    templates.Message
		want []string
	}{
		{"AllGood", templates.Message{SMS: "{{.Code}}", Voice: "{{.Code}}", EmailSubject: "Code", EmailText: "{{.Code}} {{.Minutes}} {{.Seconds}} {{.Expiry}} {{.App}}", EmailHTML: "<b>{{.Code}}</b>"}, nil},
		{"UnknownField", templates.Message{SMS: "{{.Code}} {{.Phone}}"}, []string{"sms"}},
		{"DoesNotParse", templates.Message{Voice: "{{.Code"}, []string{"voice"}},
		{"NoCode", templates.Message{EmailText: "hello", EmailHTML: "<p>hi</p>"}, []string{"email_html", "email_text"}},
		{"TooLong", templates.Message{SMS: "{{.Code}}" + strings.Repeat("x", 400)}, []string{"sms"}},
		{"SubjectNeedsNoCode", templates.Message{EmailSubject: "Your code"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for k := range tc.t.Check() {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got problems with %v (%v), want %v", got, tc.t.Check(), tc.want)
			}
		})
	}
}
