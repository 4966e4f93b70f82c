package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"otpgate/internal/otp"
	"otpgate/internal/ratelimit"
)

// config is every setting of the server, read from the environment once at start.
type config struct {
	HTTPAddr  string `env:"OTP_HTTP_ADDR" envDefault:":8080"`
	AdminAddr string `env:"OTP_ADMIN_ADDR" envDefault:"127.0.0.1:8081"`
	RedisURL  string `env:"REDIS_URL"`
	// TLS to Redis beyond the system roots: a CA to trust instead, a client certificate.
	RedisCAFile   string `env:"REDIS_CA_FILE"`
	RedisCertFile string `env:"REDIS_CLIENT_CERT_FILE"`
	RedisKeyFile  string `env:"REDIS_CLIENT_KEY_FILE"`
	DatabaseURL   string `env:"DATABASE_URL"`
	Secret        string `env:"OTP_SECRET"`
	AdminToken    string `env:"ADMIN_TOKEN"`

	SMSProvider        string        `env:"SMS_PROVIDER"`
	SMSTimeout         time.Duration `env:"SMS_TIMEOUT" envDefault:"5s"`
	WebhookURL         string        `env:"SMS_WEBHOOK_URL"`
	WebhookSecret      string        `env:"SMS_WEBHOOK_SECRET"`
	TwilioAccountSID   string        `env:"TWILIO_ACCOUNT_SID"`
	TwilioAuthToken    string        `env:"TWILIO_AUTH_TOKEN"`
	TwilioFrom         string        `env:"TWILIO_FROM"`
	TwilioMessagingSID string        `env:"TWILIO_MESSAGING_SERVICE_SID"`
	TwilioBaseURL      string        `env:"TWILIO_BASE_URL" envDefault:"https://api.twilio.com"`
	CodeLength         int           `env:"OTP_CODE_LENGTH" envDefault:"6"`
	CodeTTL            time.Duration `env:"OTP_CODE_TTL" envDefault:"5m"`
	MaxSends           int           `env:"OTP_MAX_SENDS" envDefault:"5"`
	MaxAttempts        int           `env:"OTP_MAX_ATTEMPTS" envDefault:"5"`
	DefaultRegion      string        `env:"OTP_DEFAULT_REGION"`
	AllowedCountries   []string      `env:"OTP_ALLOWED_COUNTRIES" envSeparator:","`
	LimitPhone         string        `env:"OTP_LIMIT_PHONE" envDefault:"1/1m,10/1h"`
	LimitIP            string        `env:"OTP_LIMIT_IP" envDefault:"1/1m,10/1h"`
	DuplicateWindow    time.Duration `env:"OTP_DUPLICATE_WINDOW" envDefault:"5s"`
	LimitGlobal        string        `env:"OTP_LIMIT_GLOBAL"`
	LimitCheckPhone    string        `env:"OTP_LIMIT_CHECK_PHONE" envDefault:"10/1h"`
	LimitCheckIP       string        `env:"OTP_LIMIT_CHECK_IP" envDefault:"100/1h"`
	RedisTimeout       time.Duration `env:"OTP_REDIS_TIMEOUT" envDefault:"200ms"`
	DBTimeout          time.Duration `env:"OTP_DB_TIMEOUT" envDefault:"2s"`
	RedisPrefix        string        `env:"OTP_REDIS_PREFIX" envDefault:"otpgate:"`
	TrustedProxies     []string      `env:"OTP_TRUSTED_PROXIES" envSeparator:","`
	IPv6Prefix         int           `env:"OTP_IPV6_PREFIX" envDefault:"64"`
	ShutdownTimeout    time.Duration `env:"OTP_SHUTDOWN_TIMEOUT" envDefault:"15s"`
	DrainDelay         time.Duration `env:"OTP_DRAIN_DELAY" envDefault:"5s"`
	HistoryQueue       int           `env:"OTP_HISTORY_QUEUE" envDefault:"10000"`
	LogLevel           string        `env:"OTP_LOG_LEVEL" envDefault:"info"`
	MigrateOnStart     bool          `env:"OTP_MIGRATE" envDefault:"true"`
	IdempotencyTTL     time.Duration `env:"OTP_IDEMPOTENCY_TTL" envDefault:"24h"`

	// Parsed forms, filled by parse.
	dev         bool
	phoneRules  []otp.Rule
	ipRules     []otp.Rule
	globalRules []otp.Rule
	checkPhone  []otp.Rule
	checkIP     []otp.Rule
	proxies     []netip.Prefix
}

// loadConfig reads and validates the environment. Every error names the variable.
func loadConfig(getenv func(string) string) (config, error) {
	var c config
	params, err := env.GetFieldParams(&c)
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	vars := map[string]string{}
	for _, p := range params {
		if v := getenv(p.Key); v != "" {
			vars[p.Key] = v
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Environment: vars}); err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	return c, c.parse()
}

func (c *config) parse() error {
	c.dev = c.RedisURL == "" && c.DatabaseURL == ""
	if !c.dev && (c.RedisURL == "" || c.DatabaseURL == "") {
		missing := "REDIS_URL"
		if c.DatabaseURL == "" {
			missing = "DATABASE_URL"
		}
		return fmt.Errorf("config: %s is required when the other of REDIS_URL and DATABASE_URL is set (set both for production, neither for dev mode)", missing)
	}
	if !c.dev {
		for _, req := range []struct{ name, val string }{
			{"OTP_SECRET", c.Secret}, {"ADMIN_TOKEN", c.AdminToken}, {"SMS_PROVIDER", c.SMSProvider},
		} {
			if req.val == "" {
				return fmt.Errorf("config: %s is required in production mode (REDIS_URL and DATABASE_URL are set)", req.name)
			}
		}
		if len(c.Secret) < 32 {
			return errors.New("config: OTP_SECRET must be at least 32 characters (use e.g. `openssl rand -hex 32`)")
		}
		if len(c.AdminToken) < 16 {
			return errors.New("config: ADMIN_TOKEN must be at least 16 characters")
		}
	}
	if err := c.checkRedisTLS(); err != nil {
		return err
	}
	// Dev mode may leave SMS_PROVIDER unset; production was required to set it above.
	if c.SMSProvider == "" {
		c.SMSProvider = "log"
	}
	if err := c.checkSMS(); err != nil {
		return err
	}
	if c.CodeLength < 4 || c.CodeLength > 10 {
		return fmt.Errorf("config: OTP_CODE_LENGTH=%d: must be between 4 and 10", c.CodeLength)
	}
	if c.CodeTTL <= 0 || c.CodeTTL > 10*time.Minute {
		return fmt.Errorf("config: OTP_CODE_TTL=%s: must be more than 0 and at most 10m", c.CodeTTL)
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"OTP_MAX_SENDS", c.MaxSends}, {"OTP_MAX_ATTEMPTS", c.MaxAttempts}, {"OTP_HISTORY_QUEUE", c.HistoryQueue}} {
		if p.v < 1 {
			return fmt.Errorf("config: %s=%d: must be at least 1", p.name, p.v)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"SMS_TIMEOUT", c.SMSTimeout}, {"OTP_REDIS_TIMEOUT", c.RedisTimeout}, {"OTP_DB_TIMEOUT", c.DBTimeout}, {"OTP_SHUTDOWN_TIMEOUT", c.ShutdownTimeout}, {"OTP_IDEMPOTENCY_TTL", c.IdempotencyTTL}} {
		if d.v <= 0 {
			return fmt.Errorf("config: %s=%s: must be positive", d.name, d.v)
		}
	}
	if c.DrainDelay < 0 {
		return fmt.Errorf("config: OTP_DRAIN_DELAY=%s: must be 0 or more", c.DrainDelay)
	}
	// The limiter keeps time in milliseconds and refuses shorter windows; caught here,
	// rather than as a failure of every send.
	if c.DuplicateWindow < 0 || (c.DuplicateWindow > 0 && c.DuplicateWindow < time.Millisecond) {
		return fmt.Errorf("config: OTP_DUPLICATE_WINDOW=%s: must be 0 (off) or at least 1ms", c.DuplicateWindow)
	}
	if c.IPv6Prefix < 1 || c.IPv6Prefix > 128 {
		return fmt.Errorf("config: OTP_IPV6_PREFIX=%d: must be between 1 and 128", c.IPv6Prefix)
	}
	var err error
	for _, r := range []struct {
		name, val string
		dst       *[]otp.Rule
	}{
		{"OTP_LIMIT_PHONE", c.LimitPhone, &c.phoneRules}, {"OTP_LIMIT_IP", c.LimitIP, &c.ipRules},
		{"OTP_LIMIT_GLOBAL", c.LimitGlobal, &c.globalRules},
		{"OTP_LIMIT_CHECK_PHONE", c.LimitCheckPhone, &c.checkPhone}, {"OTP_LIMIT_CHECK_IP", c.LimitCheckIP, &c.checkIP},
	} {
		if strings.TrimSpace(r.val) == "" || r.val == "off" {
			continue
		}
		if *r.dst, err = ratelimit.ParseRules(r.val); err != nil {
			return fmt.Errorf("config: %s=%q: %w", r.name, r.val, err)
		}
	}
	c.DefaultRegion = strings.ToUpper(strings.TrimSpace(c.DefaultRegion))
	for i, cc := range c.AllowedCountries {
		cc = strings.ToUpper(strings.TrimSpace(cc))
		if len(cc) != 2 || cc[0] < 'A' || cc[0] > 'Z' || cc[1] < 'A' || cc[1] > 'Z' {
			return fmt.Errorf("config: OTP_ALLOWED_COUNTRIES: %q is not an ISO 3166 alpha-2 code", cc)
		}
		c.AllowedCountries[i] = cc
	}
	for _, s := range c.TrustedProxies {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return fmt.Errorf("config: OTP_TRUSTED_PROXIES: %q is not a CIDR or an address", s)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		c.proxies = append(c.proxies, p.Masked())
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("config: OTP_LOG_LEVEL=%q: must be debug, info, warn or error", c.LogLevel)
	}
	return nil
}

// checkRedisTLS refuses TLS files that would silently not be used.
func (c *config) checkRedisTLS() error {
	if (c.RedisCertFile == "") != (c.RedisKeyFile == "") {
		return errors.New("config: REDIS_CLIENT_CERT_FILE and REDIS_CLIENT_KEY_FILE go together: set both or neither")
	}
	if c.RedisCAFile == "" && c.RedisCertFile == "" {
		return nil
	}
	if !strings.HasPrefix(c.RedisURL, "rediss://") && !strings.HasPrefix(c.RedisURL, "rediss+") {
		name := "REDIS_CA_FILE"
		if c.RedisCAFile == "" {
			name = "REDIS_CLIENT_CERT_FILE"
		}
		return fmt.Errorf("config: %s is set, but REDIS_URL does not use TLS (want rediss://, rediss+cluster:// or rediss+sentinel://)", name)
	}
	return nil
}

// checkSMS validates the provider's own settings.
func (c *config) checkSMS() error {
	need := func(pairs ...string) error {
		for i := 0; i < len(pairs); i += 2 {
			if pairs[i+1] == "" {
				return fmt.Errorf("config: %s is required with SMS_PROVIDER=%s", pairs[i], c.SMSProvider)
			}
		}
		return nil
	}
	switch c.SMSProvider {
	case "log":
		return nil
	case "webhook":
		return need("SMS_WEBHOOK_URL", c.WebhookURL, "SMS_WEBHOOK_SECRET", c.WebhookSecret)
	case "twilio":
		if err := need("TWILIO_ACCOUNT_SID", c.TwilioAccountSID, "TWILIO_AUTH_TOKEN", c.TwilioAuthToken); err != nil {
			return err
		}
		if c.TwilioFrom == "" && c.TwilioMessagingSID == "" {
			return errors.New("config: TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID is required with SMS_PROVIDER=twilio")
		}
		return nil
	default:
		return fmt.Errorf("config: SMS_PROVIDER=%q: must be log, webhook or twilio", c.SMSProvider)
	}
}

// serviceConfig is the part of the config the otp service sees.
func (c config) serviceConfig(secret []byte) otp.Config {
	return otp.Config{
		Secret: secret, CodeLength: c.CodeLength, CodeTTL: c.CodeTTL,
		MaxSends: c.MaxSends, MaxAttempts: c.MaxAttempts,
		DefaultRegion: c.DefaultRegion, AllowedCountries: c.AllowedCountries,
		PhoneRules: c.phoneRules, IPRules: c.ipRules, DuplicateWindow: c.DuplicateWindow,
		GlobalRules: c.globalRules, CheckPhoneRules: c.checkPhone, CheckIPRules: c.checkIP,
		SMSTimeout: c.SMSTimeout, LimiterTimeout: c.RedisTimeout, StoreTimeout: c.DBTimeout,
	}
}
