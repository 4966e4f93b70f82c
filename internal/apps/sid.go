package apps

import (
	"strings"

	"github.com/google/uuid"
)

// ServiceSID is an app id in Twilio's form: "VA" and the UUID's 32 hex digits.
func ServiceSID(appID string) string { return "VA" + strings.ReplaceAll(appID, "-", "") }

// VerificationSID is a verification id in Twilio's form: "VE" and the UUID's 32 hex digits.
func VerificationSID(id string) string { return "VE" + strings.ReplaceAll(id, "-", "") }

// IDFromSID reads a Twilio sid with the given two-letter prefix back into the UUID it
// stands for; ok is false for anything else.
func IDFromSID(sid, prefix string) (string, bool) {
	hex, found := strings.CutPrefix(sid, prefix)
	if !found || len(hex) != 32 {
		return "", false
	}
	u, err := uuid.Parse(hex)
	if err != nil {
		return "", false
	}
	return u.String(), true
}
