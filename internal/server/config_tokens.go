package server

import (
	"fmt"
	"net"
	"strings"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/tokens"
)

// TokenSettings are the verification tokens' keys and the default app's browser settings
// (docs/browser.md).
type TokenSettings struct {
	// AllowedOrigins are the browser origins whose pages may call the default app
	// (comma-separated); none by default.
	AllowedOrigins []string `env:"OTP_ALLOWED_ORIGINS"`
	// TokenTTL and TokenAddress are the default app's token settings.
	TokenTTL     time.Duration `env:"OTP_TOKEN_TTL" envDefault:"10m"`
	TokenAddress string        `env:"OTP_TOKEN_ADDRESS" envDefault:"address"`
	// TokenKeys are the signing keys (id:base64 PKCS #8, the first signing); unset, keys
	// of TokenAlg are generated, stored sealed and rotated every TokenKeyRotation.
	TokenKeys        string        `env:"OTP_TOKEN_KEYS"`
	TokenAlg         string        `env:"OTP_TOKEN_ALG" envDefault:"ES256"`
	TokenKeyRotation time.Duration `env:"OTP_TOKEN_KEY_ROTATION" envDefault:"720h"`

	// tokenKeys are TokenKeys read.
	tokenKeys []tokens.Key
}

// checkTokens reads the key list and checks what the app validator does not: the
// default app's token settings are checked with its other settings (checkValues).
func (c *config) checkTokens() error {
	if c.TokenKeys != "" {
		keys, err := tokens.ParseKeys(c.TokenKeys)
		if err != nil {
			return fmt.Errorf("config: OTP_TOKEN_KEYS: %w", err)
		}
		c.tokenKeys = keys
	}
	if c.TokenAlg != tokens.AlgES256 && c.TokenAlg != tokens.AlgEdDSA {
		return fmt.Errorf("config: OTP_TOKEN_ALG=%q: must be %s or %s", c.TokenAlg, tokens.AlgES256, tokens.AlgEdDSA)
	}
	if least := tokens.PublishLead + otp.MaxTokenTTL; c.TokenKeyRotation < least {
		return fmt.Errorf("config: OTP_TOKEN_KEY_ROTATION=%s: must be at least %s", c.TokenKeyRotation, least)
	}
	return nil
}

// tokenIssuer is the iss claim of tokens: OTP_PUBLIC_URL, else the public listener on
// localhost, which is what dev mode's demo page calls.
func (c config) tokenIssuer() string {
	if c.PublicURL != "" {
		return strings.TrimSuffix(c.PublicURL, "/")
	}
	_, port, err := net.SplitHostPort(c.HTTPAddr)
	if err != nil || port == "" || port == "0" {
		port = "8080"
	}
	return "http://localhost:" + port
}
