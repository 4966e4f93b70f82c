package providers

import (
	"fmt"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// Infobip's variables, without an instance's suffix.
const (
	infobipBaseURL       = "INFOBIP_BASE_URL"
	infobipAPIKey        = "INFOBIP_API_KEY"
	infobipFrom          = "INFOBIP_FROM"
	infobipWebhookSecret = "INFOBIP_WEBHOOK_SECRET"
)

// infobipKind sends SMS through Infobip's SMS API at the account's own base URL. With
// OTP_PUBLIC_URL and a webhook secret it asks for delivery reports and reads them,
// telling Infobip's from forged ones by a token of otpgate's (Infobip signs none).
func infobipKind() Kind {
	return Kind{
		Name:     "infobip",
		Channels: []string{otp.ChannelSMS},
		Settings: []Setting{
			{Name: infobipBaseURL, Required: true, Example: "https://abc123.api.infobip.com", Outbound: true},
			{Name: infobipAPIKey, Required: true, Example: "0123456789abcdef0123456789abcdef-01234567-89ab-cdef-0123-456789abcdef"},
			{Name: infobipFrom, Example: "InfoSMS"},
			{Name: infobipWebhookSecret, Example: "infobip-webhook-secret"},
		},
		Receipts: true,
		New:      newInfobip,
	}
}

// newInfobip builds an Infobip sender; it asks for delivery reports, and reads them, when
// there is a public URL to receive them at and a secret to authenticate them with.
func newInfobip(s Settings, o Options) (Built, error) {
	var notify string
	if s.Get(infobipWebhookSecret) != "" {
		notify = o.callbackURL(s.Kind, s.Name)
	}
	b, err := sms.NewInfobip(sms.InfobipConfig{
		Name: s.Name, BaseURL: s.Get(infobipBaseURL), APIKey: s.Get(infobipAPIKey), From: s.Get(infobipFrom),
		NotifyURL: notify, WebhookSecret: s.Get(infobipWebhookSecret),
		Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("provider %s (%s): %w", s.Name, s.Var(infobipBaseURL), err)
	}
	return builtReading(b, notify), nil
}
