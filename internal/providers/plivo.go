package providers

import (
	"fmt"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// Plivo's variables, without an instance's suffix.
const (
	plivoAuthID    = "PLIVO_AUTH_ID"
	plivoAuthToken = "PLIVO_AUTH_TOKEN"
	plivoFrom      = "PLIVO_FROM"
	plivoPowerpack = "PLIVO_POWERPACK_UUID"
	plivoBaseURL   = "PLIVO_BASE_URL"
)

// plivoKind sends SMS through Plivo's Message API. With OTP_PUBLIC_URL it asks for
// message status callbacks, which Plivo signs with the auth token, and reads them.
func plivoKind() Kind {
	return Kind{
		Name:     "plivo",
		Channels: []string{otp.ChannelSMS},
		Settings: []Setting{
			{Name: plivoAuthID, Required: true, Example: "MAXXXXXXXXXXXXXXXXXX"},
			{Name: plivoAuthToken, Required: true, Example: "auth-token"},
			{Name: plivoFrom, Example: "+14155550100"},
			{Name: plivoPowerpack},
			{Name: plivoBaseURL, Default: sms.DefaultPlivoBaseURL, Outbound: true},
		},
		Check:    checkPlivoSender,
		Receipts: true,
		New:      newPlivo,
	}
}

// checkPlivoSender wants exactly one sender: a number (or id) or a Powerpack.
func checkPlivoSender(s Settings) error {
	if (s.Get(plivoFrom) == "") == (s.Get(plivoPowerpack) == "") {
		return fmt.Errorf("%s or %s (not both) is required with provider %s (%s)", s.Var(plivoFrom), s.Var(plivoPowerpack), s.Name, s.Kind)
	}
	return nil
}

// newPlivo builds a Plivo sender; it reads status callbacks when it asks for them.
func newPlivo(s Settings, o Options) (Built, error) {
	callback := o.callbackURL(s.Kind, s.Name)
	p, err := sms.NewPlivo(sms.PlivoConfig{
		Name: s.Name, AuthID: s.Get(plivoAuthID), AuthToken: s.Get(plivoAuthToken), From: s.Get(plivoFrom),
		PowerpackUUID: s.Get(plivoPowerpack), Callback: callback,
		BaseURL: s.Get(plivoBaseURL), Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("provider %s: %w", s.Name, err)
	}
	return builtReading(p, callback), nil
}
