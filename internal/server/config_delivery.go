package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
	"otpgate/internal/providers"
	"otpgate/internal/rate"
	"otpgate/internal/templates"
)

// DeliverySettings are the variables of channels, provider instances, routing, failover,
// breakers, receipts and the default app's SMS options (docs/delivery.md).
type DeliverySettings struct {
	Providers         providers.Instances `env:"SMS_PROVIDERS"`
	SMSRoutes         delivery.Routes     `env:"SMS_ROUTES"`
	WhatsAppRoutes    delivery.Routes     `env:"WHATSAPP_ROUTES"`
	VoiceRoutes       delivery.Routes     `env:"VOICE_ROUTES"`
	EmailRoutes       delivery.Routes     `env:"EMAIL_ROUTES"`
	FailoverOnUnknown bool                `env:"SMS_FAILOVER_ON_UNKNOWN" envDefault:"false"`
	BreakerFailures   int                 `env:"SMS_BREAKER_FAILURES" envDefault:"5"`
	BreakerCooldown   time.Duration       `env:"SMS_BREAKER_COOLDOWN" envDefault:"30s"`
	// PublicURL is where providers reach the public listener, for Twilio's status callbacks.
	PublicURL string `env:"OTP_PUBLIC_URL"`
	// The email channel's per-address rules, as OTP_LIMIT_PHONE and OTP_LIMIT_CHECK_PHONE.
	LimitEmail      rate.Rules `env:"OTP_LIMIT_EMAIL" envDefault:"1/1m,10/1h"`
	LimitCheckEmail rate.Rules `env:"OTP_LIMIT_CHECK_EMAIL" envDefault:"10/1h"`
	// The default app's SMS options.
	WebOTPDomain   string `env:"OTP_WEBOTP_DOMAIN"`
	AndroidAppHash string `env:"OTP_ANDROID_APP_HASH"`

	// Derived by parseDelivery: every provider instance with its settings, read and
	// checked by its kind (internal/providers).
	instances []providers.Settings
}

// parseDelivery reads the provider instances and checks the delivery settings. Without
// SMS_PROVIDERS the instances are SMS_PROVIDER's, plus smtp when SMTP_URL is set.
func (c *config) parseDelivery(getenv func(string) string) error {
	list := c.Providers
	if len(list) == 0 {
		list = providers.Instances{{Name: c.SMSProvider, Kind: c.SMSProvider}}
		if getenv("SMTP_URL") != "" {
			list = append(list, providers.Instance{Name: "smtp", Kind: "smtp"})
			// The log sender carries every channel; email goes to the SMTP server alone.
			if c.EmailRoutes == nil {
				c.EmailRoutes = delivery.Routes{{Providers: []string{"smtp"}}}
			}
		}
	}
	c.instances = nil
	for _, in := range list {
		s, err := providers.Read(in, getenv)
		if err != nil {
			return fmt.Errorf("config: %w", err)
		}
		if err := s.CheckOutbound(context.Background(), c.outbound); err != nil {
			return fmt.Errorf("config: %w (OTP_OUTBOUND_ALLOW)", err)
		}
		c.instances = append(c.instances, s)
	}
	if c.BreakerFailures < 0 {
		return fmt.Errorf("config: SMS_BREAKER_FAILURES=%d: must be 0 (never opens) or more", c.BreakerFailures)
	}
	if c.BreakerCooldown <= 0 {
		return fmt.Errorf("config: SMS_BREAKER_COOLDOWN=%s: must be positive", c.BreakerCooldown)
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("config: OTP_PUBLIC_URL=%q: want an absolute http or https URL without query, such as https://otp.example.com", c.PublicURL)
		}
	}
	if c.WebOTPDomain != "" {
		if err := templates.CheckWebOTPDomain(c.WebOTPDomain); err != nil {
			return fmt.Errorf("config: OTP_WEBOTP_DOMAIN=%q: %w", c.WebOTPDomain, err)
		}
	}
	if c.AndroidAppHash != "" {
		if err := templates.CheckAppHash(c.AndroidAppHash); err != nil {
			return fmt.Errorf("config: OTP_ANDROID_APP_HASH=%q: %w", c.AndroidAppHash, err)
		}
	}
	for _, r := range c.routeTables() {
		if err := c.checkRoutes(r.variable, r.channel, r.routes); err != nil {
			return err
		}
	}
	return nil
}

// routeTable is one channel's route table and the variable it comes from.
type routeTable struct {
	variable, channel string
	routes            delivery.Routes
}

func (c *config) routeTables() []routeTable {
	return []routeTable{
		{"SMS_ROUTES", otp.ChannelSMS, c.SMSRoutes}, {"WHATSAPP_ROUTES", otp.ChannelWhatsApp, c.WhatsAppRoutes},
		{"VOICE_ROUTES", otp.ChannelVoice, c.VoiceRoutes}, {"EMAIL_ROUTES", otp.ChannelEmail, c.EmailRoutes},
	}
}

// checkRoutes refuses a route naming no instance, or one whose kind cannot carry the
// channel. (Whether a Twilio account is configured for the channel is checked when the
// router is built, naming the variable too.)
func (c *config) checkRoutes(variable, channel string, routes delivery.Routes) error {
	for _, r := range routes {
		for _, name := range r.Providers {
			i := slices.IndexFunc(c.instances, func(s providers.Settings) bool { return s.Name == name })
			if i < 0 {
				return fmt.Errorf("config: %s=%q: no provider instance named %q (SMS_PROVIDERS has %s)",
					variable, routes.String(), name, strings.Join(c.instanceNames(), ", "))
			}
			if s := c.instances[i]; !s.Carries(channel) {
				return fmt.Errorf("config: %s=%q: provider %s (%s) cannot carry %s", variable, routes.String(), name, s.Kind, channel)
			}
		}
	}
	return nil
}

func (c *config) instanceNames() []string {
	out := make([]string, len(c.instances))
	for i, s := range c.instances {
		out[i] = s.Name
	}
	return out
}

// errNoSMSProvider is the production error when neither variable names a provider.
var errNoSMSProvider = errors.New("config: SMS_PROVIDER is required in production mode (REDIS_URL and DATABASE_URL are set), unless SMS_PROVIDERS names the provider instances")

// deliveryTimeout bounds the delivery of one message: SMS_TIMEOUT per provider attempt,
// times the longest chain a message can walk, so that a hanging first provider cannot
// eat the time of the next one.
func (c *config) deliveryTimeout() time.Duration {
	longest := 1
	for _, t := range c.routeTables() {
		if t.routes == nil {
			n := 0
			for _, s := range c.instances {
				if s.Carries(t.channel) {
					n++
				}
			}
			longest = max(longest, n)
			continue
		}
		for _, r := range t.routes {
			longest = max(longest, len(r.Providers))
		}
	}
	return time.Duration(longest) * c.SMSTimeout
}
