package message

import (
	"fmt"
	"maps"
	"strings"
)

// texts are one locale's built-in templates. Each is a text/template over Data; the
// email lines are put together by emailText and the HTML layout.
type texts struct {
	// tag is the BCP 47 language tag for the email's lang attribute.
	tag string
	// rtl marks a language written right to left, for the email's dir attribute.
	rtl                 bool
	sms, voice, subject string
	// The email's lines: what the code is, how long it lasts, the warning, and what to
	// do about an email one did not ask for.
	intro, expiry, warn, ignore string
	// minute and second are the forms of "N minutes" and "N seconds", one per plural
	// category of plural, in its order: %d is the number (a form may spell it out).
	minute, second []string
	plural         pluralRule
	// digitSep goes between the digits a voice call reads out, so it reads them one by one.
	digitSep string
}

// builtin holds the built-in locales, one file per group of languages. The default SMS
// (no app name, six digits, five minutes) fits one segment in every one; the languages
// whose letters GSM-7 has are written in it throughout (TestBuiltInLocales names them).
var builtin = func() map[string]texts {
	all := map[string]texts{}
	for _, group := range []map[string]texts{westernTexts, europeanTexts, asianTexts, easternTexts} {
		maps.Copy(all, group)
	}
	return all
}()

// count says n minutes or seconds in the locale: the form of n's plural category.
func (t texts) count(forms []string, n int) string {
	f := forms[min(t.plural(n), len(forms)-1)]
	if strings.Contains(f, "%d") {
		return fmt.Sprintf(f, n)
	}
	return f
}

// pluralRule picks the form of a number, after the CLDR plural rules of a language
// family for the integers a message counts (1–59).
type pluralRule func(n int) int

// noPlural is for languages that do not inflect a noun after a number (ja, zh, ko, id, …).
func noPlural(int) int { return 0 }

// oneOther: one form for 1, another for the rest (en, de, fr, …).
func oneOther(n int) int {
	if n == 1 {
		return 0
	}
	return 1
}

// eastSlavic: 1, 21, 31 …; 2–4, 22–24 …; the rest (ru, uk, hr).
func eastSlavic(n int) int {
	switch {
	case n%10 == 1 && n%100 != 11:
		return 0
	case n%10 >= 2 && n%10 <= 4 && (n%100 < 12 || n%100 > 14):
		return 1
	}
	return 2
}

// polish: 1; 2–4, 22–24 …; the rest.
func polish(n int) int {
	switch {
	case n == 1:
		return 0
	case n%10 >= 2 && n%10 <= 4 && (n%100 < 12 || n%100 > 14):
		return 1
	}
	return 2
}

// czech: 1; 2–4; the rest (cs, sk).
func czech(n int) int {
	switch {
	case n == 1:
		return 0
	case n >= 2 && n <= 4:
		return 1
	}
	return 2
}

// lithuanian: 1, 21 …; 2–9, 22–29 …; 10–20, 30 … .
func lithuanian(n int) int {
	teen := n%100 >= 11 && n%100 <= 19
	switch {
	case n%10 == 1 && !teen:
		return 0
	case n%10 >= 2 && !teen:
		return 1
	}
	return 2
}

// romanian: 1; 2–19; 20 and more ("20 de minute").
func romanian(n int) int {
	switch {
	case n == 1:
		return 0
	case n == 0 || n%100 >= 1 && n%100 <= 19:
		return 1
	}
	return 2
}

// arabic: 1; 2; 3–10; 11 and more.
func arabic(n int) int {
	switch {
	case n == 1:
		return 0
	case n == 2:
		return 1
	case n%100 >= 3 && n%100 <= 10:
		return 2
	}
	return 3
}
