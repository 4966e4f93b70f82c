package providers_test

import (
	"log/slog"
	"testing"
	"time"

	"otpgate/internal/providers"
)

func TestSinchSettings(t *testing.T) {
	in := providers.Instance{Name: "eu", Kind: "sinch"}
	env := map[string]string{"SINCH_SERVICE_PLAN_ID_EU": "plan", "SINCH_API_TOKEN_EU": "token"}
	read := func(extra map[string]string) (providers.Settings, error) {
		return providers.Read(in, func(name string) string {
			if v, ok := extra[name]; ok {
				return v
			}
			return env[name]
		})
	}

	t.Run("AnUnknownRegionIsNamed", func(t *testing.T) {
		_, err := read(map[string]string{"SINCH_REGION_EU": "gb"})
		want := `SINCH_REGION_EU="gb": must be us, eu, au, br, ca`
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})

	t.Run("ReportsNeedTheCallbackSecretAndThePublicURL", func(t *testing.T) {
		for _, c := range []struct {
			name, secret, public string
			want                 bool
		}{
			{"Both", "callback-secret", "https://otp.example.com", true},
			{"NoSecret", "", "https://otp.example.com", false},
			{"NoPublicURL", "callback-secret", "", false},
		} {
			s, err := read(map[string]string{"SINCH_CALLBACK_SECRET_EU": c.secret, "SINCH_REGION_EU": "eu"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := providers.Build(s, providers.Options{Log: slog.New(slog.DiscardHandler), Timeout: time.Second, PublicURL: c.public})
			if err != nil {
				t.Fatal(err)
			}
			if (b.Receipts != nil) != c.want {
				t.Errorf("%s: got a receipt reader %v, want one: %v", c.name, b.Receipts, c.want)
			}
		}
	})
}
