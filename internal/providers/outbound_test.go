package providers_test

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/outbound"
	"otpgate/internal/providers"
	"otpgate/internal/sms/smstest"
)

// TestProvidersConnectOnlyWhereTheOutboundPolicyAllows builds the HTTP kinds against fake
// providers on loopback, which the default policy refuses: nothing reaches them, and the
// failure is definite (nothing can have been sent).
func TestProvidersConnectOnlyWhereTheOutboundPolicyAllows(t *testing.T) {
	const sid, token = "AC00000000000000000000000000000abc", "auth-token"
	hook := smstest.New(t, "webhook-secret")
	tw := smstest.NewTwilio(t, sid, token)
	tx := smstest.NewTelnyx(t, "telnyx-key")
	ib := smstest.NewInfobip(t, "infobip-key")
	sn := smstest.NewSNS(t, "us-east-1", "AKIDEXAMPLE", "secret")
	vonage := smstest.NewVonage(t, smstest.VonageAccount{APIKey: "abcd1234", APISecret: "abcdef0123456789"})
	plivo := smstest.NewPlivo(t, smstest.PlivoAccount{AuthID: "MAXXXXXXXXXXXXXXXXXX", AuthToken: "auth-token"})
	sinch := smstest.NewSinch(t, smstest.SinchPlan{ServicePlanID: "plan", APIToken: "api-token"})
	env := map[string]string{
		"SMS_WEBHOOK_URL": hook.URL, "SMS_WEBHOOK_SECRET": hook.Secret,
		"TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token, "TWILIO_FROM": "+15005550006", "TWILIO_BASE_URL": tw.URL,
		"TELNYX_API_KEY": tx.APIKey, "TELNYX_FROM": "+15005550006", "TELNYX_BASE_URL": tx.URL,
		"INFOBIP_API_KEY": ib.APIKey, "INFOBIP_BASE_URL": ib.URL,
		"SNS_REGION": sn.Region, "SNS_ACCESS_KEY_ID": sn.AccessKeyID, "SNS_SECRET_ACCESS_KEY": sn.SecretAccessKey, "SNS_ENDPOINT": sn.URL,
		"VONAGE_API_KEY": vonage.APIKey, "VONAGE_API_SECRET": vonage.APISecret, "VONAGE_FROM": "447700900000", "VONAGE_BASE_URL": vonage.URL,
		"PLIVO_AUTH_ID": plivo.AuthID, "PLIVO_AUTH_TOKEN": plivo.AuthToken, "PLIVO_FROM": "+14155550100", "PLIVO_BASE_URL": plivo.URL,
		"SINCH_SERVICE_PLAN_ID": sinch.ServicePlanID, "SINCH_API_TOKEN": sinch.APIToken, "SINCH_BASE_URL": sinch.URL,
	}
	for _, kind := range []string{"webhook", "twilio", "telnyx", "infobip", "sns", "vonage", "plivo", "sinch"} {
		t.Run(kind, func(t *testing.T) {
			s, err := providers.Read(providers.Instance{Name: kind, Kind: kind}, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			b, err := providers.Build(s, providers.Options{Log: slog.New(slog.DiscardHandler), Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			_, err = b.Sender.Send(context.Background(), otp.Message{ID: "s1", Channel: otp.ChannelSMS, To: "+15551234567", Body: "code 123456", Locale: "en"})
			if err == nil || !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "loopback") {
				t.Errorf("got %v, want a definite failure naming the loopback address", err)
			}
			if n := hook.Calls() + len(tw.Received()) + len(tx.Received()) + len(tx.Refused()) + len(ib.Received()) + len(ib.Refused()) + sn.Calls() + len(sn.Refused()) +
				len(vonage.Received()) + len(plivo.Received()) + len(sinch.Received()); n != 0 {
				t.Errorf("the fake providers got %d requests, want none", n)
			}
		})
	}
}

func TestCheckOutbound(t *testing.T) {
	env := map[string]string{
		"SMS_WEBHOOK_URL_ALT": "http://127.0.0.1:8081/send?token=secret", "SMS_WEBHOOK_SECRET_ALT": "s",
		"TWILIO_ACCOUNT_SID_ALT": "AC1", "TWILIO_AUTH_TOKEN_ALT": "t", "TWILIO_FROM_ALT": "+15005550006", "TWILIO_BASE_URL_ALT": "http://[::ffff:169.254.169.254]/",
		"TELNYX_API_KEY_ALT": "k", "TELNYX_FROM_ALT": "+15005550006", "TELNYX_BASE_URL_ALT": "http://10.1.2.3/",
		"INFOBIP_API_KEY_ALT": "k", "INFOBIP_BASE_URL_ALT": "http://[fd00::1]/",
		"SNS_REGION_ALT": "us-east-1", "SNS_ENDPOINT_ALT": "http://100.64.0.9/",
		"VONAGE_API_KEY_ALT": "k", "VONAGE_API_SECRET_ALT": "s", "VONAGE_FROM_ALT": "Example", "VONAGE_BASE_URL_ALT": "http://10.0.0.8/",
		"PLIVO_AUTH_ID_ALT": "MA1", "PLIVO_AUTH_TOKEN_ALT": "t", "PLIVO_FROM_ALT": "+14155550100", "PLIVO_BASE_URL_ALT": "http://[fd00::2]/",
		"SINCH_SERVICE_PLAN_ID_ALT": "plan", "SINCH_API_TOKEN_ALT": "t", "SINCH_BASE_URL_ALT": "http://100.64.0.10/",
	}
	for kind, want := range map[string]string{
		"webhook": "SMS_WEBHOOK_URL_ALT: 127.0.0.1 is a loopback address",
		"twilio":  "TWILIO_BASE_URL_ALT: 169.254.169.254 is a link-local address",
		"telnyx":  "TELNYX_BASE_URL_ALT: 10.1.2.3 is a private address",
		"infobip": "INFOBIP_BASE_URL_ALT: fd00::1 is a private address",
		"sns":     "SNS_ENDPOINT_ALT: 100.64.0.9 is a",
		"vonage":  "VONAGE_BASE_URL_ALT: 10.0.0.8 is a private address",
		"plivo":   "PLIVO_BASE_URL_ALT: fd00::2 is a private address",
		"sinch":   "SINCH_BASE_URL_ALT: 100.64.0.10 is a",
	} {
		s, err := providers.Read(providers.Instance{Name: "alt", Kind: kind}, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		err = s.CheckOutbound(t.Context(), outbound.Policy{})
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: got %v, want %q… without the URL's query", kind, err, want)
		}
		allowed := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("169.254.169.254/32"), netip.MustParsePrefix("10.1.2.3/32"),
			netip.MustParsePrefix("10.0.0.8/32"), netip.MustParsePrefix("fd00::/8"), netip.MustParsePrefix("100.64.0.0/10")})
		if err := s.CheckOutbound(t.Context(), allowed); err != nil {
			t.Errorf("%s allow-listed: got %v, want nil", kind, err)
		}
	}
}

func TestAllowListedProvidersAreReached(t *testing.T) {
	hook := smstest.New(t, "webhook-secret")
	s, err := providers.Read(providers.Instance{Name: "webhook", Kind: "webhook"}, func(k string) string {
		return map[string]string{"SMS_WEBHOOK_URL": hook.URL, "SMS_WEBHOOK_SECRET": hook.Secret}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := providers.Build(s, providers.Options{Timeout: time.Second, Outbound: outbound.New(outbound.Loopback())})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Sender.Send(context.Background(), otp.Message{ID: "s1", Channel: otp.ChannelSMS, To: "+15551234567", Body: "code 123456", Locale: "en"}); err != nil || hook.Calls() != 1 {
		t.Errorf("got %v and %d requests, want delivered once", err, hook.Calls())
	}
}
