package challenge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// Providers of CAPTCHA tokens and their siteverify endpoints; each answers a form POST of
// secret, response and remoteip with JSON {"success": bool, ...}.
var siteverify = map[string]string{
	"turnstile": "https://challenges.cloudflare.com/turnstile/v0/siteverify",
	"hcaptcha":  "https://api.hcaptcha.com/siteverify",
	"recaptcha": "https://www.google.com/recaptcha/api/siteverify",
}

// Providers lists the CAPTCHA providers Captcha knows.
func Providers() []string { return []string{"turnstile", "hcaptcha", "recaptcha"} }

// Captcha checks CAPTCHA tokens against one provider's siteverify endpoint.
type Captcha struct {
	provider, secret, endpoint string
	client                     *http.Client
}

// NewCaptcha returns a checker for provider (turnstile, hcaptcha or recaptcha) with the
// operator's secret; endpoint, when not empty, replaces the provider's siteverify URL (for
// tests and proxies). Errors name an unknown provider.
func NewCaptcha(provider, secret, endpoint string, client *http.Client) (*Captcha, error) {
	u, ok := siteverify[provider]
	if !ok {
		return nil, fmt.Errorf("unknown CAPTCHA provider %q: want one of %s", provider, strings.Join(Providers(), ", "))
	}
	if endpoint != "" {
		u = endpoint
	}
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	return &Captcha{provider: provider, secret: secret, endpoint: u, client: client}, nil
}

// maxTokenLength bounds a token; providers' tokens are at most a few kilobytes.
const maxTokenLength = 4096

// Verify asks the provider whether token is a valid, unused solution; providers spend a
// token at its first verification. Errors: *proof.ErrChallengeInvalid for a refused token,
// errors wrapping otp.ErrUnavailable when the provider cannot be asked.
func (c *Captcha) Verify(ctx context.Context, token, clientIP string) error {
	if len(token) > maxTokenLength {
		return invalid("the CAPTCHA token is too long")
	}
	form := url.Values{"secret": {c.secret}, "response": {token}}
	if clientIP != "" && !strings.Contains(clientIP, "/") {
		form.Set("remoteip", clientIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("challenge: captcha: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("challenge: captcha %s: %w: %w", c.provider, otp.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("challenge: captcha %s answered %d: %w", c.provider, resp.StatusCode, otp.ErrUnavailable)
	}
	var out struct {
		Success bool `json:"success"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out); err != nil {
		return fmt.Errorf("challenge: captcha %s: unreadable answer: %w: %w", c.provider, otp.ErrUnavailable, err)
	}
	if !out.Success {
		return invalid("the CAPTCHA token was refused")
	}
	return nil
}
