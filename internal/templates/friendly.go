package templates

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxFriendlyNameLen bounds the name a caller asks a message to show instead of its app's,
// as Twilio Verify bounds the friendly name its messages show (30 characters). It is
// below SampleNameLen, the name every template is tried with when it is set, so a message
// that shows it stays within what its template was checked for.
const maxFriendlyNameLen = 30

// FriendlyNameProblem says what is wrong with a friendly name, or "". The name goes out in
// a message under the operator's sender, so it may carry no line break, control or
// invisible character that would reshape the message, and nothing that a phone makes
// something to tap or call: no link, no scheme (tel:, sms:, javascript:…, and so no word
// followed by a colon, which reads as the start of the message's own text) and no phone
// number. A caller could otherwise send phishing text that the user's phone shows as
// coming from the operator.
func FriendlyNameProblem(name string) string {
	switch {
	case name == "":
		return ""
	case !utf8.ValidString(name):
		return "must be valid UTF-8"
	case strings.ContainsFunc(name, formatting):
		return "must not hold line breaks, control or formatting characters"
	case strings.ContainsFunc(name, ignorable):
		return "must not hold invisible characters"
	case utf8.RuneCountInString(strings.TrimSpace(name)) > maxFriendlyNameLen:
		return fmt.Sprintf("must be at most %d characters", maxFriendlyNameLen)
	}
	folded := linkFold(name)
	switch {
	case strings.Contains(folded, "://") || strings.Contains(folded, "www."):
		return "must not be or hold a link"
	case scheme.MatchString(folded):
		return "must not hold a scheme such as tel: or a word followed by a colon"
	case holdsPhoneNumber(folded):
		return "must not hold a phone number"
	}
	return ""
}

// HiddenText reports whether s holds a character that is not seen, or that changes how
// what is around it is seen: a control, a format character (Cf: the zero-width ones and
// the bidirectional controls U+200E/F, U+202A–U+202E, U+2066–U+2069 and U+061C), a line
// or paragraph separator, or another default-ignorable code point such as U+3164 HANGUL
// FILLER. Variation selectors, which emoji need, are not hidden text. Every name shown to
// someone else (a friendly name, a TOTP factor's name in its otpauth label) refuses it.
func HiddenText(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return formatting(r) || ignorable(r) })
}

// formatting reports a control, format, line or paragraph separator character.
func formatting(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// ignorable reports a default-ignorable code point beyond the format characters: the
// fillers and joiners that render as nothing.
func ignorable(r rune) bool { return unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) }

// scheme finds a URI scheme (RFC 3986: a letter, then letters, digits, "+", "." or "-")
// followed by its colon, in a name folded by linkFold.
var scheme = regexp.MustCompile(`[a-z][a-z0-9+.-]*:`)

// minPhoneDigits is how many digits in a row make a phone number; fewer are a year, an
// opening time or a number in a brand.
const minPhoneDigits = 6

// holdsPhoneNumber reports whether a folded name holds a phone number: minPhoneDigits
// digits or more in a row, or a "+" before three or more, with the spaces, dots, dashes
// and brackets that numbers are written with between them.
func holdsPhoneNumber(folded string) bool {
	digits, plus := 0, false
	for _, r := range folded + "\x00" {
		switch {
		case unicode.IsDigit(r):
			digits++
			continue
		case strings.ContainsRune(" .-()\u00a0", r):
			continue
		}
		if digits >= minPhoneDigits || plus && digits >= 3 {
			return true
		}
		digits, plus = 0, r == '+'
	}
	return false
}

// linkFold is name as a phone reads it for links: full-width and other compatibility forms
// as their plain letters (NFKC: "ｗｗｗ．" is "www."), the ideographic full stops as dots,
// in lower case.
func linkFold(name string) string {
	folded := norm.NFKC.String(name)
	folded = strings.NewReplacer("\u3002", ".", "\uff61", ".").Replace(folded)
	return strings.ToLower(folded)
}
