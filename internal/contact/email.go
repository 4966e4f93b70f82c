package contact

import (
	"strings"

	"golang.org/x/net/idna"
)

// Bounds of an email address (RFC 5321 §4.5.3.1).
const (
	maxEmailLocal = 64
	maxEmail      = 254
)

// ErrInvalidEmail means an email address could not be read or is not one mail can reach.
type ErrInvalidEmail struct {
	Reason string
}

func (e *ErrInvalidEmail) Error() string { return "invalid email: " + e.Reason }

// emailIDNA turns an internationalised domain into the ASCII form mail servers use,
// checking it as a host name that can be looked up.
var emailIDNA = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.ValidateLabels(true), idna.StrictDomainName(true), idna.VerifyDNSLength(true))

// NormalizeEmail reads an email address as users type it and returns the one form it is
// stored and limited under: the local part as given (mailboxes may tell its letter case
// apart), the domain in lower case and, when internationalised, in its ASCII (IDNA)
// form, so that "Ana@Bücher.Example" and "Ana@xn--bcher-kva.example" are one address.
// Only the dot-atom form is accepted: no display name, comment, quoted local part or
// address literal, and no non-ASCII local part, which needs an SMTPUTF8 path that
// cannot be counted on. Errors are *ErrInvalidEmail.
func NormalizeEmail(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", &ErrInvalidEmail{Reason: "empty"}
	}
	if len(s) > 4*maxEmail {
		return "", &ErrInvalidEmail{Reason: "too long"}
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return "", &ErrInvalidEmail{Reason: "has no @"}
	}
	local, domain := s[:at], s[at+1:]
	if reason := checkLocalPart(local); reason != "" {
		return "", &ErrInvalidEmail{Reason: reason}
	}
	ascii, err := emailIDNA.ToASCII(strings.TrimSuffix(domain, "."))
	if err != nil || ascii == "" {
		return "", &ErrInvalidEmail{Reason: "the domain is not a valid host name"}
	}
	ascii = strings.ToLower(ascii)
	if !strings.Contains(ascii, ".") || !validDomainLabels(ascii) {
		return "", &ErrInvalidEmail{Reason: "the domain is not a valid host name"}
	}
	out := local + "@" + ascii
	if len(out) > maxEmail {
		return "", &ErrInvalidEmail{Reason: "longer than 254 characters"}
	}
	return out, nil
}

// checkLocalPart returns what is wrong with a dot-atom local part, or "".
func checkLocalPart(local string) string {
	switch {
	case local == "":
		return "nothing before the @"
	case len(local) > maxEmailLocal:
		return "more than 64 characters before the @"
	case local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, ".."):
		return "a dot at the start or end of the name, or two in a row"
	}
	for i := 0; i < len(local); i++ {
		if !atext(local[i]) && local[i] != '.' {
			return "the name before the @ may hold letters, digits and ! # $ % & ' * + - / = ? ^ _ ` { | } ~ ."
		}
	}
	return ""
}

// atext reports whether c may appear in a dot-atom (RFC 5322 §3.2.3).
func atext(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// validDomainLabels checks an ASCII domain: labels of letters, digits and inner hyphens,
// 1 to 63 characters each, and a top-level label that is not all digits.
func validDomainLabels(d string) bool {
	labels := strings.Split(d, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// IsEmailAddress reports whether a stored address is an email address rather than an
// E.164 number: only email addresses hold an @.
func IsEmailAddress(address string) bool { return strings.Contains(address, "@") }
