package server

import (
	"net/netip"
	"strings"
	"testing"
)

// TestConfigOutbound: provider URLs that lead to special addresses stop the start, naming
// the variable, unless OTP_OUTBOUND_ALLOW (or dev mode, for loopback) lets them through.
func TestConfigOutbound(t *testing.T) {
	webhook := func(mode map[string]string, url, allow string) map[string]string {
		env := map[string]string{}
		for k, v := range mode {
			env[k] = v
		}
		for k, v := range map[string]string{"SMS_PROVIDER": "webhook", "SMS_WEBHOOK_URL": url, "SMS_WEBHOOK_SECRET": "s", "OTP_OUTBOUND_ALLOW": allow} {
			env[k] = v
		}
		return env
	}
	dev := map[string]string{}
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // the start of the error; "" for none
	}{
		{"ProductionRefusesLoopback", webhook(productionEnv(), "http://127.0.0.1:9000/send?token=x", ""),
			"config: SMS_WEBHOOK_URL: 127.0.0.1 is a loopback address, which outbound connections may not reach unless it is allow-listed (OTP_OUTBOUND_ALLOW)"},
		{"ProductionRefusesMetadata", webhook(productionEnv(), "http://[::ffff:169.254.169.254]/", ""), "config: SMS_WEBHOOK_URL: 169.254.169.254 is a link-local address"},
		{"ProductionRefusesALoopbackName", webhook(productionEnv(), "http://localhost:9000/send", ""), "config: SMS_WEBHOOK_URL: localhost resolves to "},
		{"ProductionAllowsTheAllowList", webhook(productionEnv(), "http://127.0.0.1:9000/send", "127.0.0.0/8,::1/128"), ""},
		{"ProductionAllowsPublicAddresses", webhook(productionEnv(), "https://93.184.216.34/send", ""), ""},
		{"DevAllowsLoopback", webhook(dev, "http://127.0.0.1:9000/send", ""), ""},
		{"DevRefusesPrivateAddresses", webhook(dev, "http://10.0.0.5/send", ""), "config: SMS_WEBHOOK_URL: 10.0.0.5 is a private address"},
		{"DevAllowsTheAllowList", webhook(dev, "http://10.0.0.5/send", "10.0.0.0/8"), ""},
		{"TwilioBaseURL", map[string]string{"SMS_PROVIDERS": "twilio,log", "TWILIO_ACCOUNT_SID": "AC1", "TWILIO_AUTH_TOKEN": "t",
			"TWILIO_FROM": "+15005550006", "TWILIO_BASE_URL": "http://0.0.0.0:8080"}, "config: TWILIO_BASE_URL: 0.0.0.0 is an unspecified address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadFrom(c.env)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "token")):
				t.Errorf("got %v, want %q…, without the URL's query", err, c.want)
			}
		})
	}

	t.Run("TheEventsAndProvidersGetThePolicy", func(t *testing.T) {
		cfg, err := loadFrom(webhook(productionEnv(), "https://93.184.216.34/send", "10.1.0.0/16"))
		if err != nil {
			t.Fatal(err)
		}
		private := netip.MustParseAddr("10.1.2.3")
		if cfg.eventOptions().Outbound.Check(private) != nil || cfg.outbound.Check(private) != nil {
			t.Error("the allow-listed address is refused")
		}
		if cfg.eventOptions().Outbound.Check(netip.MustParseAddr("127.0.0.1")) == nil {
			t.Error("production allows loopback without the allow-list")
		}
	})
}
