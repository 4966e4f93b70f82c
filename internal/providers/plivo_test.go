package providers_test

import (
	"testing"

	"otpgate/internal/providers"
)

func TestPlivoSettings(t *testing.T) {
	in := providers.Instance{Name: "us", Kind: "plivo"}
	for name, env := range map[string]map[string]string{
		"NoSender":      {"PLIVO_AUTH_ID_US": "MA1", "PLIVO_AUTH_TOKEN_US": "t"},
		"SenderAndPack": {"PLIVO_AUTH_ID_US": "MA1", "PLIVO_AUTH_TOKEN_US": "t", "PLIVO_FROM_US": "+14155550100", "PLIVO_POWERPACK_UUID_US": "p"},
	} {
		t.Run(name+"IsNamed", func(t *testing.T) {
			_, err := providers.Read(in, func(k string) string { return env[k] })
			want := "PLIVO_FROM_US or PLIVO_POWERPACK_UUID_US (not both) is required with provider us (plivo)"
			if err == nil || err.Error() != want {
				t.Errorf("got %v, want %s", err, want)
			}
		})
	}
}
