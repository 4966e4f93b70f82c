package twilioapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"otpgate/internal/otp"
)

// TestInvalidTextIsRefused holds the Twilio API to refusing a NUL or invalid UTF-8 in a
// form, a query or the path with 400 and code 60200 naming the parameter, before the
// service sees anything.
func TestInvalidTextIsRefused(t *testing.T) {
	for _, c := range []struct {
		name, method, path string
		form               url.Values
		param              string
	}{
		{"NULInTo", "POST", service + "/Verifications", url.Values{"To": {"+1555\x001234567"}, "Channel": {"sms"}}, "To"},
		{"NULInFriendlyName", "POST", service + "/Verifications", url.Values{"To": {"+15551234567"}, "Channel": {"sms"}, "CustomFriendlyName": {"Shop\x00"}}, "CustomFriendlyName"},
		{"InvalidUTF8InLocale", "POST", service + "/Verifications", url.Values{"To": {"+15551234567"}, "Channel": {"sms"}, "Locale": {"ja\xff"}}, "Locale"},
		{"NULInCode", "POST", service + "/VerificationCheck", url.Values{"To": {"+15551234567"}, "Code": {"123\x00456"}}, "Code"},
		{"InvalidUTF8InParameterName", "POST", service + "/VerificationCheck", url.Values{"To": {"+15551234567"}, "Code": {"123456"}, "\xff": {"1"}}, "name"},
		{"NULInQuery", "POST", service + "/Verifications?x=%00", url.Values{"To": {"+15551234567"}, "Channel": {"sms"}}, "x"},
		{"InvalidUTF8InQueryOfAGet", "GET", service + "/Verifications/VE00000000000000000000000000000000?PageSize=%FF", nil, "PageSize"},
		{"NULInPath", "GET", service + "/Verifications/VE%00", nil, "path"},
		{"InvalidUTF8InServicePath", "POST", "/Services/VA%FF/VerificationCheck", url.Values{"To": {"+15551234567"}, "Code": {"123456"}}, "path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &stub{send: func(otp.SendInput) (otp.SendResult, error) { return otp.SendResult{Verification: pending(1)}, nil }}
			st, body := call(t, newAPI(s, ""), c.method, c.path, c.form)
			if st != http.StatusBadRequest || body["code"] != float64(60200) {
				t.Fatalf("got %d %v, want 400 and code 60200", st, body)
			}
			if msg, _ := body["message"].(string); !strings.Contains(msg, "`"+c.param+"`") {
				t.Errorf("message %q does not name %q", msg, c.param)
			}
			if len(s.sends) != 0 || len(s.checks) != 0 {
				t.Errorf("the service was called: %d sends, %d checks", len(s.sends), len(s.checks))
			}
		})
	}
}
