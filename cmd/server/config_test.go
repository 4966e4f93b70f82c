package main

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
