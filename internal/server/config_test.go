package server

import (
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/fraud"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestConfigDuplicateWindow(t *testing.T) {
	cases := []struct {
		name    string
		value   string
		want    time.Duration
		wantErr string // "" for none
	}{
		{"DefaultIsFiveSeconds", "", 5 * time.Second, ""},
		{"ZeroTurnsItOff", "0", 0, ""},
		{"OneMillisecondIsTheShortest", "1ms", time.Millisecond, ""},
		{"SubMillisecondIsRefused", "500us", 0, "config: OTP_DUPLICATE_WINDOW=500µs: must be 0 (off) or at least 1ms"},
		{"NegativeIsRefused", "-1s", 0, "config: OTP_DUPLICATE_WINDOW=-1s: must be 0 (off) or at least 1ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"OTP_DUPLICATE_WINDOW": c.value}
			cfg, err := loadConfig(func(k string) string { return env[k] })
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("got %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if cfg.DuplicateWindow != c.want {
				t.Errorf("got %v, want %v", cfg.DuplicateWindow, c.want)
			}
		})
	}
}

func TestConfigSMSProvider(t *testing.T) {
	t.Run("DevModeDefaultsToLog", func(t *testing.T) {
		cfg, err := loadConfig(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if cfg.SMSProvider != "log" || !cfg.dev {
			t.Errorf("got provider %q dev %v, want log in dev mode", cfg.SMSProvider, cfg.dev)
		}
	})
	t.Run("ProductionMustNameIt", func(t *testing.T) {
		env := map[string]string{
			"REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://postgres@127.0.0.1/otpgate",
			"OTP_SECRET": strings.Repeat("s", 32), "ADMIN_TOKEN": strings.Repeat("t", 16),
		}
		_, err := loadConfig(func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "SMS_PROVIDER is required") {
			t.Errorf("got %v, want an error naming SMS_PROVIDER", err)
		}
	})
}

func TestConfigTypedValues(t *testing.T) {
	rules := func(s string) rate.Rules {
		r, err := rate.ParseRules(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("Defaults", func(t *testing.T) {
		cfg, err := loadFrom(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want rate.Rules
		}{
			{"OTP_LIMIT_PHONE", cfg.LimitPhone, rules("1/1m,10/1h")},
			{"OTP_LIMIT_IP", cfg.LimitIP, rules("1/1m,10/1h")},
			{"OTP_LIMIT_GLOBAL", cfg.LimitGlobal, nil},
			{"OTP_LIMIT_CHECK_PHONE", cfg.LimitCheckPhone, rules("10/1h")},
			{"OTP_LIMIT_CHECK_IP", cfg.LimitCheckIP, rules("100/1h")},
		} {
			if !slices.Equal(c.got, c.want) {
				t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
			}
		}
		if time.Duration(cfg.HistoryRetention) != 90*24*time.Hour || cfg.RetentionInterval != 15*time.Minute {
			t.Errorf("got history retention %v checked every %v, want 90d and 15m", time.Duration(cfg.HistoryRetention), cfg.RetentionInterval)
		}
		if cfg.DefaultAppAccess != "public" || cfg.serviceConfig(nil).DefaultApp().Access != otp.AccessPublic {
			t.Errorf("got default app access %q, want public", cfg.DefaultAppAccess)
		}
		if cfg.LogLevel.Level != slog.LevelInfo || cfg.DefaultRegion != "" || cfg.AllowedCountries != nil || cfg.TrustedProxies != nil {
			t.Errorf("got log level %v, region %q, countries %v, proxies %v; want info and none", cfg.LogLevel, cfg.DefaultRegion, cfg.AllowedCountries, cfg.TrustedProxies)
		}
	})
	t.Run("ValuesAreNormalised", func(t *testing.T) {
		cfg, err := loadFrom(map[string]string{
			"OTP_LIMIT_PHONE": "off", "OTP_LIMIT_IP": "   ", "OTP_LIMIT_GLOBAL": " 1000/1h ",
			"OTP_DEFAULT_REGION": "jp", "OTP_ALLOWED_COUNTRIES": "jp, us", "OTP_LOG_LEVEL": "DEBUG",
			"OTP_TRUSTED_PROXIES": "10.1.2.3, 10.9.0.0/8,,::ffff:192.0.2.7, 2001:db8::1/32",
		})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.LimitPhone != nil || cfg.LimitIP != nil {
			t.Errorf("got phone rules %v, IP rules %v, want none", cfg.LimitPhone, cfg.LimitIP)
		}
		if want := rules("1000/1h"); !slices.Equal(cfg.LimitGlobal, want) {
			t.Errorf("got global rules %v, want %v", cfg.LimitGlobal, want)
		}
		wantProxies := []netip.Prefix{
			netip.MustParsePrefix("10.1.2.3/32"), netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8::/32"),
		}
		if !slices.Equal([]netip.Prefix(cfg.TrustedProxies), wantProxies) {
			t.Errorf("got proxies %v, want %v", cfg.TrustedProxies, wantProxies)
		}
		if cfg.LogLevel.Level != slog.LevelDebug {
			t.Errorf("got log level %v, want debug", cfg.LogLevel)
		}
		for value, want := range map[string]otp.Access{"public": otp.AccessPublic, " KEY ": otp.AccessKey, "Off": otp.AccessOff} {
			cfg, err := loadFrom(map[string]string{"OTP_DEFAULT_APP_ACCESS": value})
			if err != nil || cfg.serviceConfig(nil).DefaultApp().Access != want {
				t.Errorf("OTP_DEFAULT_APP_ACCESS=%q: got %q, %v; want %q", value, cfg.DefaultAppAccess, err, want)
			}
		}
		for value, want := range map[string]time.Duration{"OFF": 0, "0": 0, " 30d ": 30 * 24 * time.Hour, "36h": 36 * time.Hour} {
			cfg, err := loadFrom(map[string]string{"OTP_HISTORY_RETENTION": value})
			if err != nil || time.Duration(cfg.HistoryRetention) != want {
				t.Errorf("OTP_HISTORY_RETENTION=%q: got %v, %v; want %v", value, time.Duration(cfg.HistoryRetention), err, want)
			}
		}
		sc := cfg.serviceConfig([]byte("k"))
		if sc.DefaultRegion != "JP" || !slices.Equal(sc.AllowedCountries, []string{"JP", "US"}) {
			t.Errorf("got region %q, countries %v, want JP and [JP US]", sc.DefaultRegion, sc.AllowedCountries)
		}
		if sc.PhoneRules != nil || !slices.Equal(sc.GlobalRules, []rate.Rule(rules("1000/1h"))) {
			t.Errorf("got phone rules %v, global rules %v, want none and 1000/1h", sc.PhoneRules, sc.GlobalRules)
		}
	})
}

// TestRedisTLSServerName checks the name a TLS cluster client verifies the first node's
// certificate against: the bare host, also for a bracketed IPv6 address.
func TestRedisTLSServerName(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"rediss+cluster://redis-1.internal:7000,redis-2.internal:7000", "redis-1.internal"},
		{"rediss+cluster://[::1]:7000,[::1]:7001", "::1"},
		{"rediss+cluster://127.0.0.1:7000", "127.0.0.1"},
	} {
		t.Run(c.want, func(t *testing.T) {
			rdb, err := newRedis(c.url, time.Second, redisTLS{})
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			cc, ok := rdb.(*redis.ClusterClient)
			if !ok {
				t.Fatalf("got %T, want *redis.ClusterClient", rdb)
			}
			if got := cc.Options().TLSConfig.ServerName; got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestConfigFraudSettings(t *testing.T) {
	t.Run("DefaultsAreThePackages", func(t *testing.T) {
		cfg, err := loadFrom(map[string]string{})
		if err != nil {
			t.Fatal(err)
		}
		got, want := cfg.fraudDefaults().Values(), fraud.Defaults().Values()
		if !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("EveryVariableReachesItsSetting", func(t *testing.T) {
		env := map[string]string{
			"OTP_LIMIT_COUNTRY": "*:500/1h,NG:10/1h", "OTP_LIMIT_PREFIX": "10/1h:shadow", "OTP_LIMIT_IP_NET": "50/1h",
			"OTP_PREFIX_DROP": "3", "OTP_FRAUD_GUARD": "shadow", "OTP_FRAUD_BLOCK": "2h", "OTP_FRAUD_SHORT_HORIZON": "1m",
			"OTP_FRAUD_LONG_HORIZON": "1h", "OTP_FRAUD_RATIO": "0.2", "OTP_FRAUD_PRIOR_RATE": "0.5", "OTP_FRAUD_PRIOR_WEIGHT": "10",
			"OTP_FRAUD_FLOOR_COUNTRY": "50", "OTP_FRAUD_FLOOR_PREFIX": "5", "OTP_FRAUD_FLOOR_IP_NET": "7",
			"OTP_FRAUD_SURGE": "5", "OTP_FRAUD_VOLUME_FLOOR": "20", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "15", "OTP_FRAUD_YOUNG_APPROVALS": "7", "OTP_FRAUD_COUNTRIES_PER_NETWORK": "4",
			"OTP_FRAUD_BLOCK_PASS": "3", "OTP_FRAUD_MIN_APPROVAL_DELAY": "2s", "OTP_FRAUD_FOREIGN_APPROVAL_WEIGHT": "0.25", "OTP_FRAUD_FAST_APPROVAL_WEIGHT": "0.1",
		}
		cfg, err := loadFrom(env)
		if err != nil {
			t.Fatal(err)
		}
		values := cfg.fraudDefaults().Values()
		for _, name := range fraud.FieldNames() {
			if got, want := values[name], env[fraud.EnvName(name)]; got != want {
				t.Errorf("%s: got %q, want %q", name, got, want)
			}
		}
	})
}
func TestConfigDrainDelay(t *testing.T) {
	load := func(value string) (time.Duration, error) {
		cfg, err := loadConfig(func(k string) string {
			if k == "OTP_DRAIN_DELAY" {
				return value
			}
			return ""
		})
		return cfg.DrainDelay, err
	}
	t.Run("DefaultZeroAndDurationsAreTaken", func(t *testing.T) {
		for value, want := range map[string]time.Duration{"": 5 * time.Second, "0": 0, "750ms": 750 * time.Millisecond} {
			if got, err := load(value); err != nil || got != want {
				t.Errorf("OTP_DRAIN_DELAY=%q: got %v, %v, want %v", value, got, err, want)
			}
		}
	})
	t.Run("NegativeIsRefused", func(t *testing.T) {
		const want = "config: OTP_DRAIN_DELAY=-1s: must be 0 or more"
		if _, err := load("-1s"); err == nil || err.Error() != want {
			t.Errorf("got %v, want %v", err, want)
		}
	})
}
