package otp

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxFriendlyNameLen bounds the name a caller asks a message to show instead of its app's,
// as Twilio Verify bounds the friendly name its messages show (30 characters). It is
// below maxAppNameLen, the name every template is tried with when it is set, so a message
// that shows it stays within what its template was checked for.
const maxFriendlyNameLen = 30

// checkFriendlyName says what is wrong with a friendly name, or "". The name goes out in
// a message under the operator's sender, so it may carry no line break or control
// character that would reshape the message, and nothing that reads as a link: a caller
// could otherwise send phishing text that the user's phone shows as coming from the
// operator.
func checkFriendlyName(name string) string {
	switch {
	case name == "":
		return ""
	case !utf8.ValidString(name):
		return "must be valid UTF-8"
	case strings.ContainsFunc(name, func(r rune) bool {
		return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
	}):
		return "must not hold line breaks, control or formatting characters"
	case utf8.RuneCountInString(strings.TrimSpace(name)) > maxFriendlyNameLen:
		return fmt.Sprintf("must be at most %d characters", maxFriendlyNameLen)
	}
	if folded := linkFold(name); strings.Contains(folded, "://") || strings.Contains(folded, "www.") {
		return "must not be or hold a link"
	}
	return ""
}

// linkFold is name as a phone reads it for links: full-width and other compatibility forms
// as their plain letters (NFKC: "ｗｗｗ．" is "www."), the ideographic full stops as dots,
// in lower case.
func linkFold(name string) string {
	folded := norm.NFKC.String(name)
	folded = strings.NewReplacer("\u3002", ".", "\uff61", ".").Replace(folded)
	return strings.ToLower(folded)
}
