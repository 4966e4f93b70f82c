package contact

import (
	"slices"
	"strings"
)

// locales are the message locales every channel has built-in templates for
// (internal/message holds them; its tests keep the two lists equal): every language
// Twilio Verify documents for its SMS, under the tags Twilio uses, except that Chinese
// is written zh-Hans and zh-Hant.
var locales = []string{
	"en", "ja", "zh-Hans", "zh-Hant", "ko", "es", "fr", "de", "pt-BR", "it", "id", "hi",
	"en-GB", "af", "ar", "ca", "cs", "da", "el", "et", "fi", "he", "hr", "hu", "kn", "lt",
	"mr", "ms", "nb", "nl", "pl", "pt", "ro", "ru", "sk", "sv", "te", "th", "tl", "tr", "uk", "vi",
}

// localeAliases are other tags clients send for a built-in locale: Chinese by region, as
// Twilio Verify names it, and the usual other names of a few languages.
var localeAliases = map[string]string{
	"zh": "zh-Hans", "zh-cn": "zh-Hans", "zh-sg": "zh-Hans",
	"zh-tw": "zh-Hant", "zh-hk": "zh-Hant", "zh-mo": "zh-Hant",
	"en-us": "en", "pt-pt": "pt", "no": "nb", "nb-no": "nb", "fil": "tl", "iw": "he",
}

// KnownLocales lists the locales an app may accept, in the order forms and errors name them.
func KnownLocales() []string { return slices.Clone(locales) }

// CanonLocale reads a locale tag in any letter case, with "-" or "_", and returns the
// built-in locale it names ("pt-br" is "pt-BR", "zh-TW" is "zh-Hant"); ok is false for
// a locale otpgate has no messages in.
func CanonLocale(tag string) (string, bool) {
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(tag), "_", "-"))
	if a, ok := localeAliases[t]; ok {
		return a, true
	}
	for _, l := range locales {
		if strings.ToLower(l) == t {
			return l, true
		}
	}
	return "", false
}
