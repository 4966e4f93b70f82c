package providers_test

import (
	"log/slog"
	"testing"
	"time"

	"otpgate/internal/providers"
)

func TestVonageSettings(t *testing.T) {
	in := providers.Instance{Name: "eu", Kind: "vonage"}
	env := map[string]string{"VONAGE_API_KEY_EU": "abcd1234", "VONAGE_API_SECRET_EU": "abcdef0123456789", "VONAGE_FROM_EU": "Example"}
	read := func(t *testing.T, extra map[string]string) (providers.Settings, error) {
		t.Helper()
		return providers.Read(in, func(name string) string {
			if v, ok := extra[name]; ok {
				return v
			}
			return env[name]
		})
	}

	t.Run("AnUnknownSignatureMethodIsNamed", func(t *testing.T) {
		_, err := read(t, map[string]string{"VONAGE_SIGNATURE_METHOD_EU": "sha384"})
		want := `VONAGE_SIGNATURE_METHOD_EU="sha384": must be md5hash, md5, sha1, sha256, sha512`
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})

	t.Run("ReceiptsNeedTheSignatureSecretAndThePublicURL", func(t *testing.T) {
		for _, c := range []struct {
			name, secret, public string
			want                 bool
		}{
			{"Both", "signature-secret", "https://otp.example.com", true},
			{"NoSecret", "", "https://otp.example.com", false},
			{"NoPublicURL", "signature-secret", "", false},
		} {
			s, err := read(t, map[string]string{"VONAGE_SIGNATURE_SECRET_EU": c.secret})
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
