package server

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/metrics"
	"otpgate/internal/otp"
)

func TestConfigDelivery(t *testing.T) {
	t.Run("DefaultsAreOneInstanceAndNoTables", func(t *testing.T) {
		cfg, err := loadFrom(nil)
		if err != nil {
			t.Fatal(err)
		}
		if names := cfg.instanceNames(); !slices.Equal(names, []string{"log"}) {
			t.Errorf("instances: got %v, want [log]", names)
		}
		if cfg.FailoverOnUnknown || cfg.BreakerFailures != 5 || cfg.BreakerCooldown != 30*time.Second || cfg.PublicURL != "" {
			t.Errorf("got failover %v, breaker %d/%s, public URL %q; want false, 5/30s, none", cfg.FailoverOnUnknown, cfg.BreakerFailures, cfg.BreakerCooldown, cfg.PublicURL)
		}
		if got := cfg.LimitEmail.String(); got != "1/1m,10/1h" {
			t.Errorf("OTP_LIMIT_EMAIL: got %s, want 1/1m,10/1h", got)
		}
		if got := cfg.LimitCheckEmail.String(); got != "10/1h" {
			t.Errorf("OTP_LIMIT_CHECK_EMAIL: got %s, want 10/1h", got)
		}
		if cfg.deliveryTimeout() != 5*time.Second {
			t.Errorf("delivery timeout: got %s, want SMS_TIMEOUT for a chain of one", cfg.deliveryTimeout())
		}
	})

	t.Run("InstancesReadTheirOwnSuffixedVariables", func(t *testing.T) {
		cfg, err := loadFrom(map[string]string{
			"SMS_PROVIDERS":   "webhook,backup:webhook,jp:twilio,smtp",
			"SMS_WEBHOOK_URL": "https://a.example/send", "SMS_WEBHOOK_SECRET": "a",
			"SMS_WEBHOOK_URL_BACKUP": "https://b.example/send", "SMS_WEBHOOK_SECRET_BACKUP": "b",
			"TWILIO_ACCOUNT_SID_JP": "AC1", "TWILIO_AUTH_TOKEN_JP": "t", "TWILIO_FROM_JP": "+815012345678",
			"SMTP_URL": "smtp://mail.example.com", "SMTP_FROM": "OTP <otp@example.com>",
			"SMS_ROUTES": "JP:jp,webhook,backup;*:webhook,backup", "SMS_TIMEOUT": "2s",
		})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range cfg.instances {
			got[s.Name] = s.Kind + " " + s.Get("SMS_WEBHOOK_URL") + s.Get("TWILIO_ACCOUNT_SID") + s.Get("TWILIO_FROM") + s.Get("TWILIO_BASE_URL") + s.Get("SMTP_URL")
		}
		want := map[string]string{
			"webhook": "webhook https://a.example/send", "backup": "webhook https://b.example/send",
			"jp": "twilio AC1+815012345678https://api.twilio.com", "smtp": "smtp smtp://mail.example.com",
		}
		if !slices.Equal(cfg.instanceNames(), []string{"webhook", "backup", "jp", "smtp"}) || len(got) != 4 {
			t.Fatalf("got %v, want webhook, backup, jp, smtp", cfg.instanceNames())
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: got %q, want %q", k, got[k], v)
			}
		}
		if cfg.deliveryTimeout() != 6*time.Second {
			t.Errorf("delivery timeout: got %s, want 3 × SMS_TIMEOUT for the JP chain", cfg.deliveryTimeout())
		}
	})

	t.Run("SMTPURLAddsAnInstanceThatAloneCarriesEmail", func(t *testing.T) {
		cfg, err := loadFrom(map[string]string{"SMTP_URL": "smtp://127.0.0.1:2525", "SMTP_FROM": "otp@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cfg.instanceNames(), []string{"log", "smtp"}) || cfg.EmailRoutes.String() != "*:smtp" {
			t.Errorf("got %v with EMAIL_ROUTES %q, want log and smtp, email through smtp", cfg.instanceNames(), cfg.EmailRoutes)
		}
	})

	t.Run("DevModeCarriesEveryChannelToTheLog", func(t *testing.T) {
		cfg, err := loadFrom(nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := newDelivery(cfg, slog.New(slog.DiscardHandler), metrics.New(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.router.Channels(); !slices.Equal(got, otp.Channels()) {
			t.Errorf("got %v, want every channel", got)
		}
		if len(d.readers) != 0 {
			t.Errorf("receipt readers: got %d, want none for the log", len(d.readers))
		}
	})

	t.Run("ReceiptReadersNeedThePublicURLForTwilio", func(t *testing.T) {
		env := map[string]string{
			"SMS_PROVIDERS": "twilio,backup:webhook", "TWILIO_ACCOUNT_SID": "AC1", "TWILIO_AUTH_TOKEN": "t", "TWILIO_FROM": "+15005550006",
			"SMS_WEBHOOK_URL_BACKUP": "https://b.example/send", "SMS_WEBHOOK_SECRET_BACKUP": "b",
		}
		for _, c := range []struct {
			public string
			want   []string
		}{{"", []string{"webhook/backup"}}, {"https://otp.example.com", []string{"twilio/twilio", "webhook/backup"}}} {
			env["OTP_PUBLIC_URL"] = c.public
			cfg, err := loadFrom(env)
			if err != nil {
				t.Fatal(err)
			}
			d, err := newDelivery(cfg, slog.New(slog.DiscardHandler), metrics.New(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range d.readers {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("OTP_PUBLIC_URL=%q: got %v, want %v", c.public, got, c.want)
			}
		}
	})

	t.Run("RouteToAnAccountNotSetUpForTheChannelStopsStartUp", func(t *testing.T) {
		cfg, err := loadFrom(map[string]string{
			"SMS_PROVIDERS": "twilio", "TWILIO_ACCOUNT_SID": "AC1", "TWILIO_AUTH_TOKEN": "t", "TWILIO_FROM": "ExampleCo",
			"VOICE_ROUTES": "twilio",
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = newDelivery(cfg, slog.New(slog.DiscardHandler), metrics.New(), nil)
		want := `config: VOICE_ROUTES="*:twilio": provider twilio is not configured for voice (it carries sms)`
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})

	t.Run("WebhookCannotCarryVoice", func(t *testing.T) {
		_, err := loadFrom(map[string]string{
			"SMS_PROVIDERS": "log,webhook", "SMS_WEBHOOK_URL": "https://a.example/send", "SMS_WEBHOOK_SECRET": "a", "VOICE_ROUTES": "webhook",
		})
		if err == nil || !strings.Contains(err.Error(), `VOICE_ROUTES="*:webhook": provider webhook (webhook) cannot carry voice`) {
			t.Errorf("got %v, want VOICE_ROUTES refused", err)
		}
	})

	t.Run("ProductionNeedsAProvider", func(t *testing.T) {
		env := productionEnv()
		delete(env, "SMS_PROVIDER")
		if _, err := loadFrom(env); err == nil || !strings.Contains(err.Error(), "SMS_PROVIDER is required") {
			t.Errorf("without either: got %v, want SMS_PROVIDER named", err)
		}
		env["SMS_PROVIDERS"] = "log"
		if _, err := loadFrom(env); err != nil {
			t.Errorf("with SMS_PROVIDERS: got %v, want none", err)
		}
	})
}
