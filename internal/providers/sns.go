package providers

import (
	"context"
	"fmt"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// Amazon SNS's variables, without an instance's suffix.
const (
	snsRegion            = "SNS_REGION"
	snsAccessKeyID       = "SNS_ACCESS_KEY_ID"
	snsSecretAccessKey   = "SNS_SECRET_ACCESS_KEY"
	snsSessionToken      = "SNS_SESSION_TOKEN"
	snsSenderID          = "SNS_SENDER_ID"
	snsOriginationNumber = "SNS_ORIGINATION_NUMBER"
	snsEndpoint          = "SNS_ENDPOINT"
)

// snsKind publishes SMS with Amazon SNS through the AWS SDK. Region and credentials not
// set here come from the SDK's standard chain. SNS calls no one back about delivery, so
// the kind takes no callbacks.
func snsKind() Kind {
	return Kind{
		Name:     "sns",
		Channels: []string{otp.ChannelSMS},
		Settings: []Setting{
			{Name: snsRegion, Example: "us-east-1"},
			{Name: snsAccessKeyID, Example: "AKIDEXAMPLE"},
			{Name: snsSecretAccessKey, Example: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
			{Name: snsSessionToken},
			{Name: snsSenderID},
			{Name: snsOriginationNumber},
			{Name: snsEndpoint, Outbound: true},
		},
		Check: checkSNSKeys,
		New:   newSNS,
	}
}

// checkSNSKeys refuses half a static key: the SDK would quietly take the chain's instead.
func checkSNSKeys(s Settings) error {
	if (s.Get(snsAccessKeyID) == "") != (s.Get(snsSecretAccessKey) == "") {
		return fmt.Errorf("%s and %s go together with provider %s (%s): set both, or neither to use the AWS credential chain",
			s.Var(snsAccessKeyID), s.Var(snsSecretAccessKey), s.Name, s.Kind)
	}
	return nil
}

// newSNS builds an SNS sender. Loading the AWS configuration reads files and the
// environment, never the network (credentials are fetched at the first send), so it
// needs no deadline of its own.
func newSNS(s Settings, o Options) (Built, error) {
	sender, err := sms.NewSNS(context.Background(), sms.SNSConfig{
		Name: s.Name, Region: s.Get(snsRegion),
		AccessKeyID: s.Get(snsAccessKeyID), SecretAccessKey: s.Get(snsSecretAccessKey), SessionToken: s.Get(snsSessionToken),
		SenderID: s.Get(snsSenderID), OriginationNumber: s.Get(snsOriginationNumber), Endpoint: s.Get(snsEndpoint),
		Timeout: o.Timeout, HTTPClient: o.httpClient(),
	})
	if err != nil {
		return Built{}, fmt.Errorf("provider %s (%s, %s): %w", s.Name, s.Var(snsRegion), s.Var(snsEndpoint), err)
	}
	return Built{Provider: delivery.Provider{Sender: sender}}, nil
}
