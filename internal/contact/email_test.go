package contact

import (
	"strings"
	"testing"
)

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{
		"ana@example.com":              "ana@example.com",
		"Ana.B+otp@Example.COM":        "Ana.B+otp@example.com",
		"ana@Bücher.example":           "ana@xn--bcher-kva.example",
		"ana@xn--bcher-kva.example":    "ana@xn--bcher-kva.example",
		"ana@例え.テスト":                   "ana@xn--r8jz45g.xn--zckzah",
		"ana@example.com.":             "ana@example.com",
		"o'brien!#$%&*/=?^_`{|}~@x.io": "o'brien!#$%&*/=?^_`{|}~@x.io",
	} {
		if got, err := NormalizeEmail(in); err != nil || got != want {
			t.Errorf("%q: got %q, %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ana", "ana@", "ana@localhost", "ana@123.45", "a..b@x.io", ".a@x.io", "a.@x.io", "ana@-x.io",
		strings.Repeat("a", 65) + "@x.io", "ana@" + strings.Repeat("a", 64) + ".io", "ana@[192.0.2.1]"} {
		if got, err := NormalizeEmail(in); err == nil {
			t.Errorf("%q: got %q, want an error", in, got)
		}
	}
}

func TestCanonLocale(t *testing.T) {
	for in, want := range map[string]string{"en": "en", "EN": "en", "pt-br": "pt-BR", "pt_BR": "pt-BR", "zh-hant": "zh-Hant",
		"zh-CN": "zh-Hans", "zh": "zh-Hans", "zh-TW": "zh-Hant", "zh-HK": "zh-Hant", " ja ": "ja", "hi": "hi",
		"pt": "pt", "PT-pt": "pt", "en-GB": "en-GB", "en_gb": "en-GB", "en-US": "en", "no": "nb", "fil": "tl", "iw": "he"} {
		if got, ok := CanonLocale(in); !ok || got != want {
			t.Errorf("%q: got %q, %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "xx", "pt-AO", "en-AU", "zh-Hans-CN", "fr-CA"} {
		if got, ok := CanonLocale(in); ok {
			t.Errorf("%q: got %q, want none", in, got)
		}
	}
}
