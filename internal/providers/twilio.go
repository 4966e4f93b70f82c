package providers

import (
	"fmt"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// Twilio's variables, without an instance's suffix.
const (
	twilioAccountSID         = "TWILIO_ACCOUNT_SID"
	twilioAuthToken          = "TWILIO_AUTH_TOKEN"
	twilioFrom               = "TWILIO_FROM"
	twilioMessagingSID       = "TWILIO_MESSAGING_SERVICE_SID"
	twilioWhatsAppFrom       = "TWILIO_WHATSAPP_FROM"
	twilioWhatsAppContentSID = "TWILIO_WHATSAPP_CONTENT_SID"
	twilioVoiceFrom          = "TWILIO_VOICE_FROM"
	twilioBaseURL            = "TWILIO_BASE_URL"
)

// twilioKind sends SMS and WhatsApp through Twilio's Messages API and calls through its
// Calls API; an account carries the channels it has numbers for. With OTP_PUBLIC_URL it
// asks for status callbacks and reads them.
func twilioKind() Kind {
	return Kind{
		Name:     "twilio",
		Channels: []string{otp.ChannelSMS, otp.ChannelWhatsApp, otp.ChannelVoice},
		Settings: []Setting{
			{Name: twilioAccountSID, Required: true, Example: "AC00000000000000000000000000000000"},
			{Name: twilioAuthToken, Required: true, Example: "auth-token"},
			{Name: twilioFrom, Example: "+15005550006"},
			{Name: twilioMessagingSID},
			{Name: twilioWhatsAppFrom, Example: "+15005550006"},
			{Name: twilioWhatsAppContentSID},
			{Name: twilioVoiceFrom},
			{Name: twilioBaseURL, Default: sms.DefaultTwilioBaseURL, Outbound: true},
		},
		Check:    checkTwilioNumbers,
		Receipts: true,
		New:      newTwilio,
	}
}

// checkTwilioNumbers refuses an account with nothing to send from.
func checkTwilioNumbers(s Settings) error {
	if s.Get(twilioFrom) == "" && s.Get(twilioMessagingSID) == "" && s.Get(twilioWhatsAppFrom) == "" && s.Get(twilioVoiceFrom) == "" {
		return fmt.Errorf("%s, %s, %s or %s is required with provider %s (%s)",
			s.Var(twilioFrom), s.Var(twilioMessagingSID), s.Var(twilioWhatsAppFrom), s.Var(twilioVoiceFrom), s.Name, s.Kind)
	}
	return nil
}

// newTwilio builds a Twilio sender; it reads status callbacks when it asks for them.
func newTwilio(s Settings, o Options) (Built, error) {
	callback := o.callbackURL(s.Kind, s.Name)
	t, err := sms.NewTwilio(sms.TwilioConfig{
		Name: s.Name, AccountSID: s.Get(twilioAccountSID), AuthToken: s.Get(twilioAuthToken),
		From: s.Get(twilioFrom), MessagingServiceSID: s.Get(twilioMessagingSID),
		WhatsAppFrom: s.Get(twilioWhatsAppFrom), WhatsAppContentSID: s.Get(twilioWhatsAppContentSID), VoiceFrom: s.Get(twilioVoiceFrom),
		StatusCallback: callback, BaseURL: s.Get(twilioBaseURL), Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("provider %s: %w", s.Name, err)
	}
	// The account's numbers decide its channels (a From that is a number can call).
	b := builtReading(t, callback)
	b.Channels = t.Channels()
	return b, nil
}
