package server

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// loadFrom runs loadConfig over a fixed environment.
func loadFrom(env map[string]string) (config, error) {
	return loadConfig(func(k string) string { return env[k] })
}

// productionEnv is the least environment production mode starts with.
func productionEnv() map[string]string {
	return map[string]string{
		"REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://postgres@127.0.0.1/otpgate",
		"OTP_SECRET": strings.Repeat("s", 32), "ADMIN_TOKEN": strings.Repeat("t", 16), "SMS_PROVIDER": "log",
	}
}

// TestConfigBadValues gives every variable that has a form a bad value and expects the
// one-line error that names the variable, the value and (for lists) the bad part.
func TestConfigBadValues(t *testing.T) {
	const (
		notNumber   = "not a whole number"
		notDuration = "not a duration, such as 500ms, 5s or 1h"
		positive    = "must be positive"
		alpha2      = "not an ISO 3166 alpha-2 code (two letters, such as JP)"
		noRegion    = "not a region with phone numbers (an ISO 3166 alpha-2 code, such as JP)"
		notCIDR     = "not a CIDR or an address, such as 10.0.0.0/8 or 192.0.2.7"
	)
	cases := []struct {
		name, value string
		want        string
	}{
		{"OTP_CODE_LENGTH", "3", "config: OTP_CODE_LENGTH=3: must be between 4 and 10"},
		{"OTP_CODE_LENGTH", "11", "config: OTP_CODE_LENGTH=11: must be between 4 and 10"},
		{"OTP_CODE_LENGTH", "six", `config: OTP_CODE_LENGTH="six": ` + notNumber},
		{"OTP_CODE_LENGTH", "99999999999", `config: OTP_CODE_LENGTH="99999999999": out of range`},
		{"OTP_CODE_TTL", "11m", "config: OTP_CODE_TTL=11m0s: must be more than 0 and at most 10m"},
		{"OTP_CODE_TTL", "0s", "config: OTP_CODE_TTL=0s: must be more than 0 and at most 10m"},
		{"OTP_CODE_TTL", "5", `config: OTP_CODE_TTL="5": ` + notDuration},
		{"OTP_MAX_SENDS", "0", "config: OTP_MAX_SENDS=0: must be at least 1"},
		{"OTP_MAX_SENDS", "many", `config: OTP_MAX_SENDS="many": ` + notNumber},
		{"OTP_MAX_ATTEMPTS", "-1", "config: OTP_MAX_ATTEMPTS=-1: must be at least 1"},
		{"OTP_MAX_ATTEMPTS", "5.5", `config: OTP_MAX_ATTEMPTS="5.5": ` + notNumber},
		{"OTP_HISTORY_QUEUE", "0", "config: OTP_HISTORY_QUEUE=0: must be at least 1"},
		{"SMS_TIMEOUT", "0s", "config: SMS_TIMEOUT=0s: " + positive},
		{"SMS_TIMEOUT", "fast", `config: SMS_TIMEOUT="fast": ` + notDuration},
		{"OTP_REDIS_TIMEOUT", "-200ms", "config: OTP_REDIS_TIMEOUT=-200ms: " + positive},
		{"OTP_REDIS_TIMEOUT", "200", `config: OTP_REDIS_TIMEOUT="200": ` + notDuration},
		{"OTP_DB_TIMEOUT", "0s", "config: OTP_DB_TIMEOUT=0s: " + positive},
		{"OTP_SHUTDOWN_TIMEOUT", "-1s", "config: OTP_SHUTDOWN_TIMEOUT=-1s: " + positive},
		{"OTP_IDEMPOTENCY_TTL", "1d", `config: OTP_IDEMPOTENCY_TTL="1d": ` + notDuration},
		{"OTP_SWEEP_MARGIN", "0s", "config: OTP_SWEEP_MARGIN=0s: " + positive},
		{"OTP_SWEEP_MARGIN", "1 minute", `config: OTP_SWEEP_MARGIN="1 minute": ` + notDuration},
		{"OTP_SWEEP_INTERVAL", "-30s", "config: OTP_SWEEP_INTERVAL=-30s: " + positive},
		{"OTP_HISTORY_RETENTION", "12h", "config: OTP_HISTORY_RETENTION=12h: must be at least 1d, or off"},
		{"OTP_HISTORY_RETENTION", "3 months", `config: OTP_HISTORY_RETENTION="3 months": not a duration, such as 90d or 2160h, nor off`},
		{"OTP_HISTORY_RETENTION", "-90d", `config: OTP_HISTORY_RETENTION="-90d": not a duration, such as 90d or 2160h, nor off`},
		{"OTP_RETENTION_INTERVAL", "0s", "config: OTP_RETENTION_INTERVAL=0s: " + positive},
		{"OTP_DUPLICATE_WINDOW", "5 s", `config: OTP_DUPLICATE_WINDOW="5 s": ` + notDuration},
		{"OTP_IPV6_PREFIX", "129", "config: OTP_IPV6_PREFIX=129: must be between 1 and 128"},
		{"OTP_REDIS_WAIT_REPLICAS", "-1", "config: OTP_REDIS_WAIT_REPLICAS=-1: must be 0 (off) or more"},
		{"OTP_REDIS_WAIT_REPLICAS", "one", `config: OTP_REDIS_WAIT_REPLICAS="one": ` + notNumber},
		{"OTP_REDIS_WAIT_REPLICAS", "1", "config: OTP_REDIS_WAIT_REPLICAS=1: the embedded dev-mode Redis has no replicas; set REDIS_URL to a Redis that has them"},
		{"OTP_IPV6_PREFIX", "/64", `config: OTP_IPV6_PREFIX="/64": ` + notNumber},
		{"OTP_LIMIT_PHONE", "1/1m,0/1h", `config: OTP_LIMIT_PHONE="1/1m,0/1h": rule 2 "0/1h": count: "0" is zero`},
		{"OTP_LIMIT_IP", "10/1y", `config: OTP_LIMIT_IP="10/1y": rule 1 "10/1y": window: "1y" has unknown unit "y": want one of ms, s, m, h, d`},
		{"OTP_LIMIT_GLOBAL", "1/1m,2/60s", `config: OTP_LIMIT_GLOBAL="1/1m,2/60s": rule 2 "2/60s": a rule for window 1m is already given`},
		{"OTP_LIMIT_CHECK_PHONE", "10 per hour", `config: OTP_LIMIT_CHECK_PHONE="10 per hour": rule 1 "10 per hour": missing "/": want count/window like 10/1h`},
		{"OTP_LIMIT_CHECK_IP", "100/1h,", `config: OTP_LIMIT_CHECK_IP="100/1h,": rule 2 "": empty rule: want count/window like 10/1h`},
		{"OTP_DEFAULT_REGION", "JPN", `config: OTP_DEFAULT_REGION="JPN": ` + alpha2},
		{"OTP_DEFAULT_REGION", "XX", `config: OTP_DEFAULT_REGION="XX": ` + noRegion},
		{"OTP_DEFAULT_REGION", "jpn", `config: OTP_DEFAULT_REGION="jpn": ` + alpha2},
		{"OTP_ALLOWED_COUNTRIES", "JP,XX", `config: OTP_ALLOWED_COUNTRIES="JP,XX": entry 2 "XX": ` + noRegion},
		{"OTP_ALLOWED_COUNTRIES", "Japan", `config: OTP_ALLOWED_COUNTRIES="Japan": entry 1 "Japan": ` + alpha2},
		{"OTP_ALLOWED_COUNTRIES", "JP,,US", `config: OTP_ALLOWED_COUNTRIES="JP,,US": entry 2 "": empty: want codes like JP,US`},
		{"OTP_TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal", `config: OTP_TRUSTED_PROXIES="10.0.0.0/8,proxy.internal": entry 2 "proxy.internal": ` + notCIDR},
		{"OTP_TRUSTED_PROXIES", "10.0.0.0/33", `config: OTP_TRUSTED_PROXIES="10.0.0.0/33": entry 1 "10.0.0.0/33": ` + notCIDR},
		{"OTP_OUTBOUND_ALLOW", "127.0.0.0/8,localhost", `config: OTP_OUTBOUND_ALLOW="127.0.0.0/8,localhost": entry 2 "localhost": ` + notCIDR},
		{"OTP_DEFAULT_APP_ACCESS", "private", `config: OTP_DEFAULT_APP_ACCESS="private": must be public, key or off`},
		{"OTP_LOG_LEVEL", "verbose", `config: OTP_LOG_LEVEL="verbose": must be debug, info, warn or error`},
		{"OTP_LOG_LEVEL", "warn+2", `config: OTP_LOG_LEVEL="warn+2": must be debug, info, warn or error`},
		{"OTP_MIGRATE", "maybe", `config: OTP_MIGRATE="maybe": must be true or false`},
		{"OTP_ALLOWED_ORIGINS", "https://shop.example.com,shop.example.com", `config: OTP_ALLOWED_ORIGINS=[https://shop.example.com shop.example.com]: "shop.example.com" is not an origin such as https://app.example.com (scheme, host and port only)`},
		{"OTP_ALLOWED_ORIGINS", "http://shop.example.com", `config: OTP_ALLOWED_ORIGINS=[http://shop.example.com]: "http://shop.example.com" must be https (http only for localhost, 127.0.0.1 and [::1])`},
		{"OTP_TOKEN_TTL", "2h", "config: OTP_TOKEN_TTL=2h0m0s: must be between 10 and 3600"},
		{"OTP_TOKEN_ADDRESS", "plain", `config: OTP_TOKEN_ADDRESS=plain: must be "address" or "index"`},
		{"OTP_TOKEN_ALG", "RS256", `config: OTP_TOKEN_ALG="RS256": must be ES256 or EdDSA`},
		{"OTP_TOKEN_KEY_ROTATION", "1h", "config: OTP_TOKEN_KEY_ROTATION=1h0m0s: must be at least 1h10m0s"},
		{"OTP_TOKEN_KEYS", "k1", `config: OTP_TOKEN_KEYS: "k1": want id:base64-key with an id of 1 to 64 letters, digits, '.', '_' or '-'`},
		{"OTP_TOKEN_KEYS", "k1:bm90IGEga2V5", `config: OTP_TOKEN_KEYS: key "k1" is not a PKCS #8 private key`},
		{"SMS_PROVIDER", "pigeon", `config: SMS_PROVIDER="pigeon": must be log, webhook, twilio, telnyx, infobip, sns, vonage, plivo or sinch`},
		{"OTP_LIMIT_COUNTRY", "*:500/1h,XX:10/1h", `config: OTP_LIMIT_COUNTRY="*:500/1h,XX:10/1h": entry 2 "XX:10/1h": "XX" is not an ISO 3166 country code or *`},
		{"OTP_LIMIT_COUNTRY", "10/1h", `config: OTP_LIMIT_COUNTRY="10/1h": entry 1 "10/1h": want COUNTRY:count/window, such as NG:10/1h or *:500/1h`},
		{"OTP_LIMIT_PREFIX", "10/1h:loud", `config: OTP_LIMIT_PREFIX="10/1h:loud": rule 1 "10/1h:loud": want count/window, optionally followed by ":shadow"`},
		{"OTP_LIMIT_IP_NET", "5/1m,6/60s", `config: OTP_LIMIT_IP_NET="5/1m,6/60s": rule 2 "6/60s": a rule for window 1m is already given`},
		{"OTP_PREFIX_DROP", "9", "config: OTP_PREFIX_DROP=9: must be between 1 and 8"},
		{"OTP_PREFIX_DROP", "four", `config: OTP_PREFIX_DROP="four": ` + notNumber},
		{"OTP_FRAUD_GUARD", "on", `config: OTP_FRAUD_GUARD="on": must be off, shadow or enforce`},
		{"OTP_FRAUD_BLOCK", "forever", `config: OTP_FRAUD_BLOCK="forever": not a duration, such as 90s, 12h or 7d`},
		{"OTP_FRAUD_BLOCK", "0s", `config: OTP_FRAUD_BLOCK="0s": ` + positive},
		{"OTP_FRAUD_BLOCK", "31d", "config: OTP_FRAUD_BLOCK=744h: must be between 1s and 720h"},
		{"OTP_FRAUD_SHORT_HORIZON", "500ms", "config: OTP_FRAUD_SHORT_HORIZON=500ms: must be between 1s and 168h"},
		{"OTP_FRAUD_LONG_HORIZON", "1m", "config: OTP_FRAUD_LONG_HORIZON=1m: must be at least the short horizon"},
		{"OTP_FRAUD_RATIO", "1.5", "config: OTP_FRAUD_RATIO=1.5: must be more than 0 and at most 1"},
		{"OTP_FRAUD_RATIO", "high", `config: OTP_FRAUD_RATIO="high": not a number`},
		{"OTP_FRAUD_PRIOR_RATE", "-0.1", "config: OTP_FRAUD_PRIOR_RATE=-0.1: must be between 0 and 1"},
		{"OTP_FRAUD_PRIOR_WEIGHT", "0", "config: OTP_FRAUD_PRIOR_WEIGHT=0: must be more than 0 and at most 1000000"},
		{"OTP_FRAUD_FLOOR_COUNTRY", "0", "config: OTP_FRAUD_FLOOR_COUNTRY=0: must be between 1 and 1000000"},
		{"OTP_FRAUD_FLOOR_PREFIX", "ten", `config: OTP_FRAUD_FLOOR_PREFIX="ten": ` + notNumber},
		{"OTP_FRAUD_FLOOR_IP_NET", "-3", "config: OTP_FRAUD_FLOOR_IP_NET=-3: must be between 1 and 1000000"},
	}
	for _, c := range cases {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			_, err := loadFrom(map[string]string{c.name: c.value})
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}

	// Secrets are named but never echoed.
	for _, c := range []struct{ name, value, want string }{
		{"OTP_SECRET", "short-secret", "config: OTP_SECRET must be at least 32 characters (use e.g. `openssl rand -hex 32`)"},
		{"ADMIN_TOKEN", "short-token", "config: ADMIN_TOKEN must be at least 16 characters"},
		{"OTP_ACCOUNT_TOKEN", "short-account-token", "config: OTP_ACCOUNT_TOKEN must be 32 to 256 letters and digits (use e.g. `openssl rand -hex 32`)"},
		{"OTP_ACCOUNT_TOKEN", "0123456789abcdef0123456789abcdef:", "config: OTP_ACCOUNT_TOKEN must be 32 to 256 letters and digits (use e.g. `openssl rand -hex 32`)"},
	} {
		t.Run(c.name+"IsNotEchoed/"+strconv.Itoa(len(c.value)), func(t *testing.T) {
			env := productionEnv()
			env[c.name] = c.value
			_, err := loadFrom(env)
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}

	t.Run("EveryBadValueOnOneLine", func(t *testing.T) {
		_, err := loadFrom(map[string]string{"OTP_CODE_TTL": "soon", "OTP_LOG_LEVEL": "loud"})
		want := `config: OTP_CODE_TTL="soon": ` + notDuration + `; OTP_LOG_LEVEL="loud": must be debug, info, warn or error`
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %v", err, want)
		}
	})
}

func TestConfigRedisWaitReplicas(t *testing.T) {
	for _, c := range []struct {
		name, value string
		want        int
	}{{"DefaultIsOff", "", 0}, {"ProductionTakesACount", "2", 2}} {
		t.Run(c.name, func(t *testing.T) {
			env := productionEnv()
			env["OTP_REDIS_WAIT_REPLICAS"] = c.value
			cfg, err := loadFrom(env)
			if err != nil || cfg.RedisWaitReplicas != c.want {
				t.Errorf("got %d (%v), want %d", cfg.RedisWaitReplicas, err, c.want)
			}
		})
	}
}

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
