package otp

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
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
	if lower := strings.ToLower(name); strings.Contains(lower, "://") || strings.Contains(lower, "www.") {
		return "must not be or hold a link"
	}
	return ""
}
