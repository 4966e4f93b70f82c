package providers

import (
	"fmt"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// Sinch's variables, without an instance's suffix.
const (
	sinchServicePlan    = "SINCH_SERVICE_PLAN_ID"
	sinchAPIToken       = "SINCH_API_TOKEN"
	sinchFrom           = "SINCH_FROM"
	sinchRegion         = "SINCH_REGION"
	sinchCallbackSecret = "SINCH_CALLBACK_SECRET"
	sinchBaseURL        = "SINCH_BASE_URL"
)

// sinchKind sends SMS through Sinch's SMS REST API in the service plan's region. With
// OTP_PUBLIC_URL and the plan's HMAC callback secret it asks for delivery reports and
// reads them; without the secret it asks for none, since an unsigned report cannot be
// told from a forged one.
func sinchKind() Kind {
	return Kind{
		Name:     "sinch",
		Channels: []string{otp.ChannelSMS},
		Settings: []Setting{
			{Name: sinchServicePlan, Required: true, Example: "jd63jf88477ll123ab4567cd89012ef3"},
			{Name: sinchAPIToken, Required: true, Example: "api-token"},
			{Name: sinchFrom, Example: "+12015550100"},
			{Name: sinchRegion, Default: "us"},
			{Name: sinchCallbackSecret, Example: "callback-secret"},
			// Empty means the region's API root, which is a public host.
			{Name: sinchBaseURL, Outbound: true},
		},
		Check:    checkSinchRegion,
		Receipts: true,
		New:      newSinch,
	}
}

// checkSinchRegion refuses a region Sinch's SMS API does not have.
func checkSinchRegion(s Settings) error {
	return checkOneOf(s, sinchRegion, sms.SinchRegions())
}

// newSinch builds a Sinch sender; it reads delivery reports when it asks for them.
func newSinch(s Settings, o Options) (Built, error) {
	var callback string
	if s.Get(sinchCallbackSecret) != "" {
		callback = o.callbackURL(s.Kind, s.Name)
	}
	c, err := sms.NewSinch(sms.SinchConfig{
		Name: s.Name, ServicePlanID: s.Get(sinchServicePlan), APIToken: s.Get(sinchAPIToken), From: s.Get(sinchFrom),
		Region: s.Get(sinchRegion), CallbackSecret: s.Get(sinchCallbackSecret), Callback: callback,
		BaseURL: s.Get(sinchBaseURL), Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("provider %s: %w", s.Name, err)
	}
	return builtReading(c, callback), nil
}
