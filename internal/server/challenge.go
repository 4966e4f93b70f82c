package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"otpgate/internal/challenge"
	"otpgate/internal/contact"
	"otpgate/internal/rate"
)

// ChallengeSettings are the variables of the fraud guard's challenges (docs/fraud.md): the
// work a level-1 proof of work asks, how long a challenge may be solved and used, and the
// optional CAPTCHA provider whose tokens are accepted instead.
type ChallengeSettings struct {
	ChallengeComplexity int           `env:"OTP_CHALLENGE_COMPLEXITY" envDefault:"25000"`
	ChallengeTTL        time.Duration `env:"OTP_CHALLENGE_TTL" envDefault:"5m"`
	CaptchaProvider     string        `env:"OTP_CAPTCHA_PROVIDER"`
	CaptchaSecret       string        `env:"OTP_CAPTCHA_SECRET"`
	// CaptchaVerifyURL replaces the provider's siteverify address (a proxy, or a test's fake).
	CaptchaVerifyURL string `env:"OTP_CAPTCHA_VERIFY_URL"`
	// DenyNumberTypes are the number types codes are not sent to by SMS or voice.
	DenyNumberTypes numberTypes `env:"OTP_DENY_NUMBER_TYPES" envDefault:"premium_rate,shared_cost,uan,pager,personal_number"`
}

// checkChallenge refuses settings the challenger cannot work with, naming the variable.
func (s ChallengeSettings) checkChallenge() error {
	switch {
	case s.ChallengeComplexity < 1_000 || s.ChallengeComplexity > 10_000_000:
		return fmt.Errorf("config: OTP_CHALLENGE_COMPLEXITY=%d: must be between 1000 and 10000000", s.ChallengeComplexity)
	case s.ChallengeTTL < 10*time.Second || s.ChallengeTTL > time.Hour:
		return fmt.Errorf("config: OTP_CHALLENGE_TTL=%s: must be between 10s and 1h", s.ChallengeTTL)
	case s.CaptchaProvider == "" && s.CaptchaSecret != "":
		return fmt.Errorf("config: OTP_CAPTCHA_SECRET is set but OTP_CAPTCHA_PROVIDER is not: want one of %s", strings.Join(challenge.Providers(), ", "))
	case s.CaptchaProvider != "" && s.CaptchaSecret == "":
		return fmt.Errorf("config: OTP_CAPTCHA_PROVIDER=%s needs OTP_CAPTCHA_SECRET", s.CaptchaProvider)
	}
	if s.CaptchaProvider != "" {
		if _, err := challenge.NewCaptcha(s.CaptchaProvider, s.CaptchaSecret, s.CaptchaVerifyURL, nil); err != nil {
			return fmt.Errorf("config: OTP_CAPTCHA_PROVIDER=%s: %w", s.CaptchaProvider, err)
		}
	}
	return nil
}

// newChallenger is the fraud guard's challenger, its proofs of work signed with a key of
// the server's secret.
func (s ChallengeSettings) newChallenger(secret []byte, client *http.Client) (*challenge.Challenger, error) {
	o := challenge.Options{Secret: secret, Complexity: s.ChallengeComplexity, TTL: s.ChallengeTTL}
	if s.CaptchaProvider != "" {
		c, err := challenge.NewCaptcha(s.CaptchaProvider, s.CaptchaSecret, s.CaptchaVerifyURL, client)
		if err != nil {
			return nil, err
		}
		o.Captcha, o.CaptchaLevel = c, rate.ChallengeTop
	}
	return challenge.New(o), nil
}

// captchaClient is the CAPTCHA provider's client: through the outbound address policy, as
// every outbound HTTP call, within the provider's time.
func captchaClient(cfg config) *http.Client {
	c := cfg.outbound.Client()
	c.Timeout = captchaTimeout
	return c
}

// captchaTimeout bounds one siteverify call; a provider slower than this fails the send
// closed (503), as any backing service does.
const captchaTimeout = 5 * time.Second

// numberTypes is a comma-separated list of number types (contact.PhoneType's names); "none"
// or nothing is the empty list.
type numberTypes []string

// UnmarshalText reads the list; errors name the unknown type.
func (n *numberTypes) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	out := numberTypes{}
	if s == "" || s == "none" {
		*n = out
		return nil
	}
	known := contact.NumberTypes()
	for _, part := range strings.Split(s, ",") {
		t := strings.ToLower(strings.TrimSpace(part))
		ok := false
		for _, k := range known {
			ok = ok || k == t
		}
		if !ok {
			return fmt.Errorf("%q is not a number type: want some of %s, or none", part, strings.Join(known, ", "))
		}
		out = append(out, t)
	}
	*n = out
	return nil
}
