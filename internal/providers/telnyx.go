package providers

import (
	"crypto/ed25519"
	"fmt"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// Telnyx's variables, without an instance's suffix.
const (
	telnyxAPIKey    = "TELNYX_API_KEY"
	telnyxFrom      = "TELNYX_FROM"
	telnyxProfileID = "TELNYX_MESSAGING_PROFILE_ID"
	telnyxPublicKey = "TELNYX_PUBLIC_KEY"
	telnyxBaseURL   = "TELNYX_BASE_URL"
)

// telnyxKind sends SMS through Telnyx's Messages API v2. With OTP_PUBLIC_URL and the
// account's public key it asks for delivery webhooks and reads them, checking their
// Ed25519 signatures.
func telnyxKind() Kind {
	return Kind{
		Name:     "telnyx",
		Channels: []string{otp.ChannelSMS},
		Settings: []Setting{
			{Name: telnyxAPIKey, Required: true, Example: "KEY0123456789ABCDEF_example"},
			{Name: telnyxFrom, Example: "+15005550006"},
			{Name: telnyxProfileID},
			{Name: telnyxPublicKey, Example: "dVxMuSVsp83ErP3Gz+7ahJAX5bn5UU6ZGRvWfgsNQnY="},
			{Name: telnyxBaseURL, Default: sms.DefaultTelnyxBaseURL, Outbound: true},
		},
		Check:    checkTelnyxSender,
		Receipts: true,
		New:      newTelnyx,
	}
}

// checkTelnyxSender refuses an account with nothing to send from.
func checkTelnyxSender(s Settings) error {
	if s.Get(telnyxFrom) == "" && s.Get(telnyxProfileID) == "" {
		return fmt.Errorf("%s or %s is required with provider %s (%s)", s.Var(telnyxFrom), s.Var(telnyxProfileID), s.Name, s.Kind)
	}
	return nil
}

// newTelnyx builds a Telnyx sender; it asks for delivery webhooks, and reads them, when
// there is a public URL to receive them at and a public key to check them with.
func newTelnyx(s Settings, o Options) (Built, error) {
	var webhook string
	var public ed25519.PublicKey
	if v := s.Get(telnyxPublicKey); v != "" {
		key, err := sms.ParseTelnyxPublicKey(v)
		if err != nil {
			return Built{}, fmt.Errorf("%s: %w", s.Var(telnyxPublicKey), err)
		}
		public, webhook = key, o.callbackURL(s.Kind, s.Name)
	}
	t, err := sms.NewTelnyx(sms.TelnyxConfig{
		Name: s.Name, APIKey: s.Get(telnyxAPIKey), From: s.Get(telnyxFrom), MessagingProfileID: s.Get(telnyxProfileID),
		PublicKey: public, WebhookURL: webhook, BaseURL: s.Get(telnyxBaseURL),
		Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("provider %s: %w", s.Name, err)
	}
	return builtReading(t, webhook), nil
}
