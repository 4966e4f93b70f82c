package message_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"otpgate/internal/contact"
	"otpgate/internal/message"
	"otpgate/internal/otp"
)

var locales = contact.KnownLocales()

// gsm7 are the locales whose letters GSM-7 has: their SMS is written in it throughout.
var gsm7 = []string{"en", "en-GB", "fr", "de", "it", "id", "nl", "sv", "da", "nb", "fi", "et", "af", "ca", "ms", "tl"}

func catalog(t *testing.T) *message.Catalog {
	t.Helper()
	c, err := message.New(nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func render(t *testing.T, c *message.Catalog, p otp.MessageParams) otp.MessageContent {
	t.Helper()
	out, err := c.Render(p)
	if err != nil {
		t.Fatalf("Render(%+v): %v", p, err)
	}
	return out
}

func TestBuiltInLocales(t *testing.T) {
	c := catalog(t)
	if got := strings.Join(c.Locales(), ","); len(c.Locales()) != len(locales) {
		t.Fatalf("locales: got %s, want the %d of %v", got, len(locales), locales)
	}

	t.Run("EveryTemplateRendersWithTheCodeInEveryLocale", func(t *testing.T) {
		for _, l := range locales {
			for _, ch := range otp.Channels() {
				for _, app := range []string{"", "Example"} {
					out := render(t, c, otp.MessageParams{Channel: ch, Locale: l, Code: "483920", App: app, TTL: 5 * time.Minute})
					code := "483920"
					if ch == otp.ChannelVoice {
						code = "3" // spelled out digit by digit: each digit is there
						if strings.Contains(out.Body, "483920") {
							t.Errorf("%s/%s: voice reads %q as one number; want the digits one by one", l, ch, out.Body)
						}
					}
					if !strings.Contains(out.Body, code) || !utf8.ValidString(out.Body) || strings.Contains(out.Body, "<no value>") {
						t.Errorf("%s/%s app %q: body %q lacks the code or is broken", l, ch, app, out.Body)
					}
					if app != "" && !strings.Contains(out.Body+out.Subject, app) {
						t.Errorf("%s/%s: got %q, want the app name in it", l, ch, out.Body)
					}
					if ch == otp.ChannelEmail {
						if out.Subject == "" || strings.Contains(out.Subject, "\n") || !strings.Contains(out.HTML, "483920") || !strings.Contains(out.HTML, `lang="`+l+`"`) {
							t.Errorf("%s/email: got subject %q and html %q, want a one-line subject and the code in the HTML", l, out.Subject, out.HTML)
						}
					}
				}
			}
		}
	})

	t.Run("DefaultSMSFitsOneSegment", func(t *testing.T) {
		for _, l := range locales {
			out := render(t, c, otp.MessageParams{Channel: otp.ChannelSMS, Locale: l, Code: "483920", TTL: 5 * time.Minute})
			if out.Segments != 1 {
				t.Errorf("%s: %q is %d %s segments, want 1", l, out.Body, out.Segments, out.Encoding)
			}
			// The longest a default message gets: an app name, ten digits, ten minutes.
			long := render(t, c, otp.MessageParams{Channel: otp.ChannelSMS, Locale: l, Code: "1234567890", App: "Example Shop", TTL: 10 * time.Minute})
			switch {
			case slices.Contains(gsm7, l) && (out.Encoding != otp.EncodingGSM7 || long.Encoding != otp.EncodingGSM7 || long.Segments != 1):
				t.Errorf("%s: %q is %d %s segments, want 1 GSM-7", l, long.Body, long.Segments, long.Encoding)
			case !slices.Contains(gsm7, l) && long.Segments > 2:
				t.Errorf("%s: %q is %d %s segments, want at most 2", l, long.Body, long.Segments, long.Encoding)
			}
		}
	})

	t.Run("EnglishAndJapaneseKeepTheirWording", func(t *testing.T) {
		for _, tc := range []struct {
			locale string
			ttl    time.Duration
			want   string
		}{
			{"en", 5 * time.Minute, "Your verification code is 483920. It expires in 5 minutes. Never share this code with anyone."},
			{"en", 90 * time.Second, "Your verification code is 483920. It expires in 1 minute. Never share this code with anyone."},
			{"en", 30 * time.Second, "Your verification code is 483920. It expires in 30 seconds. Never share this code with anyone."},
			{"ja", 5 * time.Minute, "認証コード: 483920\n5分以内に入力してください。このコードは誰にも教えないでください。"},
			{"ja", 45 * time.Second, "認証コード: 483920\n45秒以内に入力してください。このコードは誰にも教えないでください。"},
		} {
			if got := render(t, c, otp.MessageParams{Locale: tc.locale, Code: "483920", TTL: tc.ttl}).Body; got != tc.want {
				t.Errorf("%s %s: got %q, want %q", tc.locale, tc.ttl, got, tc.want)
			}
		}
	})

	t.Run("NeverPromisesMoreTimeThanTheCodeHas", func(t *testing.T) {
		for _, l := range locales {
			out := render(t, c, otp.MessageParams{Locale: l, Code: "483920", TTL: 4*time.Minute + 59*time.Second})
			if !strings.Contains(out.Body, "4") || strings.Contains(out.Body, "5") {
				t.Errorf("%s: got %q for 4m59s, want 4 minutes (rounded down)", l, out.Body)
			}
		}
	})

	t.Run("UnknownLocaleIsInvalidRequest", func(t *testing.T) {
		_, err := c.Render(otp.MessageParams{Locale: "xx", Code: "1234", TTL: time.Minute})
		var inv *otp.ErrInvalidRequest
		if !errors.As(err, &inv) || inv.Fields["locale"] == "" || c.HasLocale("xx") || !c.HasLocale("pt-BR") {
			t.Errorf("got %v, want ErrInvalidRequest naming locale", err)
		}
	})
}

func TestSMSOptions(t *testing.T) {
	c := catalog(t)
	p := otp.MessageParams{Channel: otp.ChannelSMS, Locale: "en", Code: "483920", TTL: 5 * time.Minute,
		WebOTPDomain: "login.example.com", AppHash: "FA+9qCX9VSu"}

	t.Run("WebOTPLineIsLastAndAppHashBeforeIt", func(t *testing.T) {
		lines := strings.Split(render(t, c, p).Body, "\n")
		if n := len(lines); n != 3 || lines[n-1] != "@login.example.com #483920" || lines[n-2] != "FA+9qCX9VSu" {
			t.Errorf("got lines %q, want the text, the app hash, then @login.example.com #483920", lines)
		}
	})

	t.Run("NotOnOtherChannels", func(t *testing.T) {
		for _, ch := range []string{otp.ChannelWhatsApp, otp.ChannelVoice, otp.ChannelEmail} {
			q := p
			q.Channel = ch
			if out := render(t, c, q); strings.Contains(out.Body, "@login.example.com") || strings.Contains(out.Body, "FA+9") {
				t.Errorf("%s: got %q, want no WebOTP line or app hash", ch, out.Body)
			}
		}
	})

	t.Run("BadOptionsAreRefused", func(t *testing.T) {
		for _, q := range []otp.MessageParams{
			{Locale: "en", Code: "1234", TTL: time.Minute, WebOTPDomain: "https://example.com"},
			{Locale: "en", Code: "1234", TTL: time.Minute, WebOTPDomain: "Example.com"},
			{Locale: "en", Code: "1234", TTL: time.Minute, WebOTPDomain: "example.com:443"},
			{Locale: "en", Code: "1234", TTL: time.Minute, WebOTPDomain: "localhost"},
			{Locale: "en", Code: "1234", TTL: time.Minute, AppHash: "short"},
			{Locale: "en", Code: "1234", TTL: time.Minute, AppHash: "FA+9qCX9VS!"},
		} {
			if _, err := c.Render(q); err == nil {
				t.Errorf("%+v: got nil, want an error", q)
			}
		}
	})
}

func TestCustomTemplates(t *testing.T) {
	t.Run("ReplaceBuiltInOnes", func(t *testing.T) {
		c, err := message.New(map[string]message.Templates{"en": {
			SMS:       "{{.App}} code {{.Code}}, valid {{.Minutes}} min",
			EmailHTML: "<p>{{.Code}} for {{.App}}</p>",
		}})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		p := otp.MessageParams{Locale: "en", Code: "4839", App: "<Shop>", TTL: 150 * time.Second}
		if got := render(t, c, p).Body; got != "<Shop> code 4839, valid 2 min" {
			t.Errorf("sms: got %q, want the custom text with 2 whole minutes", got)
		}
		p.Channel = otp.ChannelEmail
		if got := render(t, c, p); got.HTML != "<p>4839 for &lt;Shop&gt;</p>" || !strings.Contains(got.Body, "4839") {
			t.Errorf("email: got html %q body %q, want the custom, escaped HTML and the built-in text", got.HTML, got.Body)
		}
	})

	t.Run("BadOnesAreRefusedAtStart", func(t *testing.T) {
		for name, custom := range map[string]map[string]message.Templates{
			"Syntax":        {"en": {SMS: "{{.Code"}},
			"UnknownField":  {"en": {SMS: "{{.Phone}}"}},
			"UnknownLocale": {"xx": {SMS: "{{.Code}}"}},
			"BadHTML":       {"en": {EmailHTML: "<p>{{.Nope}}</p>"}},
		} {
			if _, err := message.New(custom); err == nil {
				t.Errorf("%s: got nil, want an error", name)
			}
		}
	})
}

func TestEncoding(t *testing.T) {
	for _, tc := range []struct {
		name     string
		text     string
		encoding string
		segments int
	}{
		{"Empty", "", otp.EncodingGSM7, 1},
		{"GSM160", strings.Repeat("a", 160), otp.EncodingGSM7, 1},
		{"GSM161", strings.Repeat("a", 161), otp.EncodingGSM7, 2},
		{"GSM306", strings.Repeat("a", 306), otp.EncodingGSM7, 2},
		{"GSM307", strings.Repeat("a", 307), otp.EncodingGSM7, 3},
		{"AccentsInTheBasicSet", "èéùìòÇØøÅåÆæßÉÄÖÑÜäöñüà§¿¡£¥", otp.EncodingGSM7, 1},
		{"ExtensionCountsTwice", strings.Repeat("€", 80), otp.EncodingGSM7, 1},
		{"ExtensionOverflows", strings.Repeat("€", 81), otp.EncodingGSM7, 2},
		{"ExtensionPairNotSplit", strings.Repeat("a", 152) + "[" + strings.Repeat("a", 10), otp.EncodingGSM7, 2},
		{"ExtensionPairMovesOver", strings.Repeat("a", 152) + "[" + strings.Repeat("a", 152), otp.EncodingGSM7, 3},
		{"AcuteIsNotGSM", "código", otp.EncodingUCS2, 1},
		{"UCS70", strings.Repeat("あ", 70), otp.EncodingUCS2, 1},
		{"UCS71", strings.Repeat("あ", 71), otp.EncodingUCS2, 2},
		{"UCS134", strings.Repeat("あ", 134), otp.EncodingUCS2, 2},
		{"UCS135", strings.Repeat("あ", 135), otp.EncodingUCS2, 3},
		{"SurrogatesCountTwice", strings.Repeat("😀", 35), otp.EncodingUCS2, 1},
		{"SurrogatePairNotSplit", strings.Repeat("あ", 66) + "😀" + strings.Repeat("あ", 3), otp.EncodingUCS2, 2},
		{"SurrogatePairMovesOver", strings.Repeat("あ", 66) + "😀" + strings.Repeat("あ", 66), otp.EncodingUCS2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, seg := message.Encoding(tc.text)
			if enc != tc.encoding || seg != tc.segments {
				t.Errorf("got %s %d, want %s %d", enc, seg, tc.encoding, tc.segments)
			}
		})
	}
}

// TestExpiryIsInflected holds the counted forms to each language's grammar.
func TestExpiryIsInflected(t *testing.T) {
	c := catalog(t)
	for _, tc := range []struct {
		locale string
		ttl    time.Duration
		want   string
	}{
		{"ru", time.Minute, "1 минуту"}, {"ru", 2 * time.Minute, "2 минуты"}, {"ru", 5 * time.Minute, "5 минут"},
		{"ru", 21 * time.Second, "21 секунду"}, {"ru", 22 * time.Second, "22 секунды"}, {"ru", 11 * time.Second, "11 секунд"},
		{"uk", 3 * time.Minute, "3 хвилини"}, {"hr", 21 * time.Second, "21 sekundu"}, {"hr", 12 * time.Second, "12 sekundi"},
		{"pl", time.Minute, "1 minutę"}, {"pl", 3 * time.Minute, "3 minuty"}, {"pl", 22 * time.Second, "22 sekundy"}, {"pl", 12 * time.Second, "12 sekund"},
		{"cs", 4 * time.Minute, "4 minuty"}, {"cs", 5 * time.Minute, "5 minut"}, {"sk", time.Minute, "1 minútu"},
		{"lt", time.Minute, "1 minutę"}, {"lt", 2 * time.Minute, "2 minutes"}, {"lt", 10 * time.Minute, "10 minučių"}, {"lt", 21 * time.Second, "21 sekundę"}, {"lt", 15 * time.Second, "15 sekundžių"},
		{"ro", time.Minute, "1 minut"}, {"ro", 5 * time.Minute, "5 minute"}, {"ro", 19 * time.Second, "19 secunde"}, {"ro", 25 * time.Second, "25 de secunde"},
		{"ar", time.Minute, "دقيقة واحدة"}, {"ar", 2 * time.Minute, "دقيقتين"}, {"ar", 3 * time.Minute, "3 دقائق"}, {"ar", 11 * time.Second, "11 ثانية"},
		{"he", time.Minute, "דקה אחת"}, {"he", 2 * time.Minute, "2 דקות"},
		{"fi", time.Minute, "1 minuutin"}, {"fi", 5 * time.Minute, "5 minuuttia"}, {"nl", time.Minute, "1 minuut"}, {"el", 30 * time.Second, "30 δευτερόλεπτα"},
	} {
		if got := render(t, c, otp.MessageParams{Channel: otp.ChannelSMS, Locale: tc.locale, Code: "483920", TTL: tc.ttl}).Body; !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: got %q, want it to say %q", tc.locale, tc.ttl, got, tc.want)
		}
	}
}

func TestRightToLeftEmail(t *testing.T) {
	c := catalog(t)
	for l, dir := range map[string]string{"ar": "rtl", "he": "rtl", "en": "ltr", "ja": "ltr"} {
		if out := render(t, c, otp.MessageParams{Channel: otp.ChannelEmail, Locale: l, Code: "483920", TTL: time.Minute}); !strings.Contains(out.HTML, `dir="`+dir+`"`) {
			t.Errorf("%s: got %q, want dir=%q", l, out.HTML, dir)
		}
	}
}
