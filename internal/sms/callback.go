package sms

import (
	"fmt"
	"net/url"
	"strings"

	"otpgate/internal/otp"
)

// checkParams refuses a genuine callback with a NUL or invalid UTF-8 in a parameter's
// name or value: no id or status otpgate sent or can keep looks like that, so it is
// refused, naming the parameter, before anything is looked up.
func checkParams(params map[string]string) error {
	for name, v := range params {
		if p := otp.TextProblem(name); p != "" {
			return &otp.ErrInvalidText{Field: "name", Problem: "parameter names " + p}
		}
		if err := otp.CheckText(name, v); err != nil {
			return err
		}
	}
	return nil
}

// singleValues flattens a form whose every parameter comes once, as a provider's callback
// does; a parameter given twice leaves its signature ambiguous, so it is an error.
func singleValues(form url.Values) (map[string]string, error) {
	out := make(map[string]string, len(form))
	for name, vs := range form {
		if len(vs) != 1 {
			return nil, fmt.Errorf("parameter %q given %d times", snippet(name, ""), len(vs))
		}
		out[name] = vs[0]
	}
	return out, nil
}

// nationalDigits is an E.164 number without its "+", as the APIs that take digits only
// (Vonage's to, Plivo's dst) spell it.
func nationalDigits(e164 string) string { return strings.TrimPrefix(e164, "+") }

// maskOf is what a reply quoted in an error must not show: the message and, when the
// text does not carry it whole, the code.
func maskOf(m otp.Message) string {
	secret := m.Body
	if m.Code != "" && !strings.Contains(secret, m.Code) {
		secret += " " + m.Code
	}
	return secret
}

// unicodeText reports whether m needs a UCS-2 message: as rendered, or, for a message
// rendered elsewhere, whenever its text leaves ASCII (sending GSM-7 letters such as "é"
// as UCS-2 costs segments, sending other letters as GSM-7 loses them).
func unicodeText(m otp.Message) bool {
	if m.Encoding != "" {
		return m.Encoding == otp.EncodingUCS2
	}
	for _, r := range m.Body {
		if r > 0x7e {
			return true
		}
	}
	return false
}

// checkURL refuses a URL (what: "base URL", "callback URL") that is not an absolute
// http or https URL, quoting it without its query or user info.
func checkURL(kind, what, s string) error {
	if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("sms %s: %s %q must be an absolute http or https URL", kind, what, redactURL(s))
	}
	return nil
}
