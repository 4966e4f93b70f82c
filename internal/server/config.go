package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"otpgate/internal/apps"
	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/outbound"
	"otpgate/internal/providers"
	"otpgate/internal/rate"
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
	// AccountToken is the Auth Token of the Twilio Verify compatible API's account
	// credential (any account SID as the user); unset refuses it.
	AccountToken string `env:"OTP_ACCOUNT_TOKEN"`

	SMSProvider      string            `env:"SMS_PROVIDER"`
	SMSTimeout       time.Duration     `env:"SMS_TIMEOUT" envDefault:"5s"`
	CodeLength       int               `env:"OTP_CODE_LENGTH" envDefault:"6"`
	CodeTTL          time.Duration     `env:"OTP_CODE_TTL" envDefault:"5m"`
	MaxSends         int               `env:"OTP_MAX_SENDS" envDefault:"5"`
	MaxAttempts      int               `env:"OTP_MAX_ATTEMPTS" envDefault:"5"`
	DefaultRegion    contact.Region    `env:"OTP_DEFAULT_REGION"`
	AllowedCountries contact.Countries `env:"OTP_ALLOWED_COUNTRIES"`
	LimitPhone       rate.Rules        `env:"OTP_LIMIT_PHONE" envDefault:"1/1m,10/1h"`
	LimitIP          rate.Rules        `env:"OTP_LIMIT_IP" envDefault:"1/1m,10/1h"`
	DuplicateWindow  time.Duration     `env:"OTP_DUPLICATE_WINDOW" envDefault:"5s"`
	LimitGlobal      rate.Rules        `env:"OTP_LIMIT_GLOBAL"`
	LimitCheckPhone  rate.Rules        `env:"OTP_LIMIT_CHECK_PHONE" envDefault:"10/1h"`
	LimitCheckIP     rate.Rules        `env:"OTP_LIMIT_CHECK_IP" envDefault:"100/1h"`
	// DefaultAppAccess is who may call the default app: anyone (public), callers with one
	// of its keys (key), or nobody (off).
	DefaultAppAccess  defaultAccess `env:"OTP_DEFAULT_APP_ACCESS" envDefault:"public"`
	RedisTimeout      time.Duration `env:"OTP_REDIS_TIMEOUT" envDefault:"200ms"`
	RedisWaitReplicas int           `env:"OTP_REDIS_WAIT_REPLICAS" envDefault:"0"`
	DBTimeout         time.Duration `env:"OTP_DB_TIMEOUT" envDefault:"2s"`
	RedisPrefix       string        `env:"OTP_REDIS_PREFIX" envDefault:"otpgate:"`
	TrustedProxies    prefixes      `env:"OTP_TRUSTED_PROXIES"`
	IPv6Prefix        int           `env:"OTP_IPV6_PREFIX" envDefault:"64"`
	ShutdownTimeout   time.Duration `env:"OTP_SHUTDOWN_TIMEOUT" envDefault:"15s"`
	DrainDelay        time.Duration `env:"OTP_DRAIN_DELAY" envDefault:"5s"`
	HistoryQueue      int           `env:"OTP_HISTORY_QUEUE" envDefault:"10000"`
	LogLevel          logLevel      `env:"OTP_LOG_LEVEL" envDefault:"info"`
	MigrateOnStart    bool          `env:"OTP_MIGRATE" envDefault:"true"`
	IdempotencyTTL    time.Duration `env:"OTP_IDEMPOTENCY_TTL" envDefault:"24h"`
	// A send left sending for SMS_TIMEOUT + SweepMargin is settled as unknown.
	SweepMargin   time.Duration `env:"OTP_SWEEP_MARGIN" envDefault:"1m"`
	SweepInterval time.Duration `env:"OTP_SWEEP_INTERVAL" envDefault:"30s"`
	// History older than HistoryRetention is purged (0: kept for ever), checked every
	// RetentionInterval.
	HistoryRetention  retentionSpan `env:"OTP_HISTORY_RETENTION" envDefault:"90d"`
	RetentionInterval time.Duration `env:"OTP_RETENTION_INTERVAL" envDefault:"15m"`
	// OutboundAllow lets webhooks and HTTP providers reach these special addresses
	// (loopback, private, …), which the outbound policy otherwise refuses.
	OutboundAllow prefixes `env:"OTP_OUTBOUND_ALLOW"`
	FraudSettings
	ChallengeSettings
	DeliverySettings
	EventSettings
	TraceSettings
	OperatorSettings
	PIISettings
	TokenSettings

	// Derived by parse.
	dev bool
	// outbound is the address policy of webhooks and HTTP providers: OTP_OUTBOUND_ALLOW,
	// and loopback in dev mode.
	outbound outbound.Policy
}

// loadConfig reads and validates the environment. Every error names the variable and
// the bad value: `config: NAME=value: what is wrong`.
func loadConfig(getenv func(string) string) (config, error) {
	var c config
	params, err := env.GetFieldParams(&c)
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	// An empty variable counts as unset, so it keeps its default.
	vars := map[string]string{}
	values := map[string]string{} // what each variable was read as, for errors
	for _, p := range params {
		values[p.Key] = p.DefaultValue
		if v := getenv(p.Key); v != "" {
			vars[p.Key], values[p.Key] = v, v
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Environment: vars}); err != nil {
		return c, envError(err, values)
	}
	return c, c.parse(getenv)
}

func (c *config) parse(getenv func(string) string) error {
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
			{"OTP_SECRET", c.Secret}, {"ADMIN_TOKEN", c.AdminToken},
		} {
			if req.val == "" {
				return fmt.Errorf("config: %s is required in production mode (REDIS_URL and DATABASE_URL are set)", req.name)
			}
		}
		if c.SMSProvider == "" && len(c.Providers) == 0 {
			return errNoSMSProvider
		}
		if len(c.Secret) < 32 {
			return errors.New("config: OTP_SECRET must be at least 32 characters (use e.g. `openssl rand -hex 32`)")
		}
		if len(c.AdminToken) < 16 {
			return errors.New("config: ADMIN_TOKEN must be at least 16 characters")
		}
	}
	if err := checkAccountToken(c.AccountToken); err != nil {
		return err
	}
	if err := c.checkRedisTLS(); err != nil {
		return err
	}
	if err := c.checkChallenge(); err != nil {
		return err
	}
	if err := c.checkTraces(); err != nil {
		return err
	}
	allow := c.OutboundAllow
	if c.dev {
		allow = append(outbound.Loopback(), allow...)
	}
	c.outbound = outbound.New(allow)
	// Dev mode may leave SMS_PROVIDER unset; production was required to set it above.
	if c.SMSProvider == "" {
		c.SMSProvider = "log"
	}
	if err := c.checkSMS(); err != nil {
		return err
	}
	if err := c.parseDelivery(getenv); err != nil {
		return err
	}
	if err := c.checkValues(); err != nil {
		return err
	}
	if err := c.checkEvents(); err != nil {
		return err
	}
	if err := c.checkOperators(); err != nil {
		return err
	}
	if err := c.checkPII(); err != nil {
		return err
	}
	if err := c.checkTokens(); err != nil {
		return err
	}
	return c.checkFraud()
}

// checkValues holds the bounds of single values that their types do not know.
func (c *config) checkValues() error {
	bad := func(name string, v any, problem string) error {
		return fmt.Errorf("config: %s=%v: %s", name, v, problem)
	}
	// The default app's settings pass the validator every app passes.
	if _, err := apps.Validate(c.serviceConfig(nil).DefaultApp()); err != nil {
		var invalid *otp.ErrInvalidRequest
		if errors.As(err, &invalid) {
			for _, v := range []struct {
				field, name string
				v           any
			}{{"code_length", "OTP_CODE_LENGTH", c.CodeLength}, {"code_ttl_seconds", "OTP_CODE_TTL", c.CodeTTL},
				{"max_sends", "OTP_MAX_SENDS", c.MaxSends}, {"max_attempts", "OTP_MAX_ATTEMPTS", c.MaxAttempts},
				{"allowed_countries", "OTP_ALLOWED_COUNTRIES", c.AllowedCountries}, {"allowed_origins", "OTP_ALLOWED_ORIGINS", c.AllowedOrigins},
				{"token_ttl_seconds", "OTP_TOKEN_TTL", c.TokenTTL}, {"token_address", "OTP_TOKEN_ADDRESS", c.TokenAddress}} {
				if problem, ok := invalid.Fields[v.field]; ok {
					return bad(v.name, v.v, problem)
				}
			}
		}
		return fmt.Errorf("config: default app: %w", err)
	}
	if c.HistoryQueue < 1 {
		return bad("OTP_HISTORY_QUEUE", c.HistoryQueue, "must be at least 1")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"SMS_TIMEOUT", c.SMSTimeout}, {"OTP_REDIS_TIMEOUT", c.RedisTimeout}, {"OTP_DB_TIMEOUT", c.DBTimeout}, {"OTP_SHUTDOWN_TIMEOUT", c.ShutdownTimeout}, {"OTP_IDEMPOTENCY_TTL", c.IdempotencyTTL},
		{"OTP_SWEEP_MARGIN", c.SweepMargin}, {"OTP_SWEEP_INTERVAL", c.SweepInterval}, {"OTP_RETENTION_INTERVAL", c.RetentionInterval}} {
		if d.v <= 0 {
			return bad(d.name, d.v, "must be positive")
		}
	}
	// Shorter, and a verification could go while it may still be checked, or an hour be
	// counted into the rollups while its sends still change.
	if r := time.Duration(c.HistoryRetention); r != 0 && r < 24*time.Hour {
		return bad("OTP_HISTORY_RETENTION", rate.FormatWindow(r), "must be at least 1d, or off")
	}
	if c.DrainDelay < 0 {
		return fmt.Errorf("config: OTP_DRAIN_DELAY=%s: must be 0 or more", c.DrainDelay)
	}
	// The limiter keeps time in milliseconds and refuses shorter windows; caught here,
	// rather than as a failure of every send.
	if c.DuplicateWindow < 0 || (c.DuplicateWindow > 0 && c.DuplicateWindow < time.Millisecond) {
		return bad("OTP_DUPLICATE_WINDOW", c.DuplicateWindow, "must be 0 (off) or at least 1ms")
	}
	if c.IPv6Prefix < 1 || c.IPv6Prefix > 128 {
		return bad("OTP_IPV6_PREFIX", c.IPv6Prefix, "must be between 1 and 128")
	}
	if c.RedisWaitReplicas < 0 {
		return bad("OTP_REDIS_WAIT_REPLICAS", c.RedisWaitReplicas, "must be 0 (off) or more")
	}
	// The embedded Redis has no replicas: every send would fail closed.
	if c.dev && c.RedisWaitReplicas > 0 {
		return bad("OTP_REDIS_WAIT_REPLICAS", c.RedisWaitReplicas, "the embedded dev-mode Redis has no replicas; set REDIS_URL to a Redis that has them")
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

// checkSMS validates SMS_PROVIDER, the one SMS instance of a setup without
// SMS_PROVIDERS: any kind that can carry SMS. Each instance's own variables are checked
// by parseDelivery.
func (c *config) checkSMS() error {
	if k, ok := providers.Lookup(c.SMSProvider); ok && slices.Contains(k.Channels, otp.ChannelSMS) {
		return nil
	}
	return fmt.Errorf("config: SMS_PROVIDER=%q: must be %s", c.SMSProvider, providers.Choices(otp.ChannelSMS))
}

// serviceConfig is the part of the config the otp service sees.
func (c config) serviceConfig(secret []byte) otp.Config {
	return otp.Config{
		Secret: secret, CodeLength: c.CodeLength, CodeTTL: c.CodeTTL,
		MaxSends: c.MaxSends, MaxAttempts: c.MaxAttempts,
		DefaultRegion: string(c.DefaultRegion), AllowedCountries: c.AllowedCountries,
		PhoneRules: c.LimitPhone, IPRules: c.LimitIP, DuplicateWindow: c.DuplicateWindow,
		GlobalRules: c.LimitGlobal, CheckPhoneRules: c.LimitCheckPhone, CheckIPRules: c.LimitCheckIP,
		EmailRules: c.LimitEmail, CheckEmailRules: c.LimitCheckEmail,
		WebOTPDomain: c.WebOTPDomain, AndroidAppHash: c.AndroidAppHash,
		SMSTimeout: c.deliveryTimeout(), LimiterTimeout: c.RedisTimeout, StoreTimeout: c.DBTimeout,
		DeniedNumberTypes: c.DenyNumberTypes, DefaultAccess: otp.Access(c.DefaultAppAccess),
		AllowedOrigins: c.AllowedOrigins, TokenTTL: c.TokenTTL, TokenAddress: otp.TokenAddress(c.TokenAddress),
	}
}

// checkAccountToken holds OTP_ACCOUNT_TOKEN to a secret nobody guesses: at least 32
// letters and digits (what Twilio's helper libraries take as a password, as they do
// otpgate's key secrets).
func checkAccountToken(t string) error {
	if t == "" {
		return nil
	}
	if len(t) < 32 || len(t) > 256 || strings.IndexFunc(t, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	}) >= 0 {
		return errors.New("config: OTP_ACCOUNT_TOKEN must be 32 to 256 letters and digits (use e.g. `openssl rand -hex 32`)")
	}
	return nil
}
