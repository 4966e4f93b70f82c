package providers

import (
	"fmt"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// Vonage's variables, without an instance's suffix.
const (
	vonageAPIKey          = "VONAGE_API_KEY"
	vonageAPISecret       = "VONAGE_API_SECRET"
	vonageFrom            = "VONAGE_FROM"
	vonageSignatureSecret = "VONAGE_SIGNATURE_SECRET"
	vonageSignatureMethod = "VONAGE_SIGNATURE_METHOD"
	vonageBaseURL         = "VONAGE_BASE_URL"
)

// vonageKind sends SMS through Vonage's SMS API. With OTP_PUBLIC_URL and the account's
// signature secret it asks for delivery receipts and reads them; without the secret it
// asks for none, since an unsigned receipt cannot be told from a forged one.
func vonageKind() Kind {
	return Kind{
		Name:     "vonage",
		Channels: []string{otp.ChannelSMS},
		Settings: []Setting{
			{Name: vonageAPIKey, Required: true, Example: "abcd1234"},
			{Name: vonageAPISecret, Required: true, Example: "abcdef0123456789"},
			{Name: vonageFrom, Required: true, Example: "447700900000"},
			{Name: vonageSignatureSecret, Example: "signature-secret"},
			{Name: vonageSignatureMethod, Default: sms.VonageMD5Hash},
			{Name: vonageBaseURL, Default: sms.DefaultVonageBaseURL, Outbound: true},
		},
		Check:    checkVonageMethod,
		Receipts: true,
		New:      newVonage,
	}
}

// checkVonageMethod refuses a signature method Vonage does not offer.
func checkVonageMethod(s Settings) error {
	return checkOneOf(s, vonageSignatureMethod, sms.VonageSignatureMethods())
}

// newVonage builds a Vonage sender; it reads delivery receipts when it asks for them.
func newVonage(s Settings, o Options) (Built, error) {
	var callback string
	if s.Get(vonageSignatureSecret) != "" {
		callback = o.callbackURL(s.Kind, s.Name)
	}
	v, err := sms.NewVonage(sms.VonageConfig{
		Name: s.Name, APIKey: s.Get(vonageAPIKey), APISecret: s.Get(vonageAPISecret), From: s.Get(vonageFrom),
		SignatureSecret: s.Get(vonageSignatureSecret), SignatureMethod: s.Get(vonageSignatureMethod), Callback: callback,
		BaseURL: s.Get(vonageBaseURL), Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("provider %s: %w", s.Name, err)
	}
	return builtReading(v, callback), nil
}
