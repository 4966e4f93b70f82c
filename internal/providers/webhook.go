package providers

import (
	"fmt"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// The webhook's variables, without an instance's suffix.
const (
	webhookURL    = "SMS_WEBHOOK_URL"
	webhookSecret = "SMS_WEBHOOK_SECRET"
)

// webhookKind posts each SMS as signed JSON to a receiver of the operator's own, which
// may post delivery receipts back, signed with the same secret.
func webhookKind() Kind {
	return Kind{
		Name:     "webhook",
		Channels: []string{otp.ChannelSMS},
		Settings: []Setting{
			{Name: webhookURL, Required: true, Example: "https://sms.example.com/send", Outbound: true},
			{Name: webhookSecret, Required: true, Example: "webhook-secret"},
		},
		Receipts: true,
		New:      newWebhook,
	}
}

// newWebhook builds a webhook sender, which also reads the receiver's receipts.
func newWebhook(s Settings, o Options) (Built, error) {
	w, err := sms.NewWebhook(sms.WebhookConfig{
		URL: s.Get(webhookURL), Secret: s.Get(webhookSecret), Name: s.Name, Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("%s: %w", s.Var(webhookURL), err)
	}
	return Built{Provider: delivery.Provider{Sender: w}, Receipts: w}, nil
}
