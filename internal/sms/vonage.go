package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// DefaultVonageBaseURL is the root of Vonage's SMS API.
const DefaultVonageBaseURL = "https://rest.nexmo.com"

// VonageConfig configures a sender on Vonage's SMS API (VONAGE_* variables).
type VonageConfig struct {
	APIKey    string
	APISecret string
	// From is the sender: a number in E.164 (the "+" may be left out) or an alphanumeric id.
	From string
	// SignatureSecret is the account's signature secret, which signs its delivery receipts
	// when Vonage has turned signed webhooks on; SignatureMethod is the account's
	// algorithm (VonageSignatureMethods; empty means VonageMD5Hash).
	SignatureSecret string
	SignatureMethod string
	// Callback is the URL Vonage posts delivery receipts to; empty asks for none. It
	// needs SignatureSecret: an unsigned receipt cannot be told from a forged one.
	Callback string
	// Name is the instance's name in routes, history and metrics; empty means "vonage".
	Name string
	// BaseURL is the API root; empty means DefaultVonageBaseURL. Tests point it elsewhere.
	BaseURL string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the secrets, so printing the config cannot leak them.
func (c VonageConfig) String() string {
	return fmt.Sprintf("{Name:%s APIKey:%s APISecret:[redacted] From:%s SignatureSecret:[redacted] SignatureMethod:%s Callback:%s BaseURL:%s Timeout:%s}",
		c.Name, c.APIKey, c.From, c.SignatureMethod, redactURL(c.Callback), redactURL(c.BaseURL), c.Timeout)
}

// LogValue hides the secrets from slog.
func (c VonageConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("api_key", c.APIKey),
		slog.String("from", c.From),
		slog.String("base_url", redactURL(c.BaseURL)),
		slog.Duration("timeout", c.Timeout),
	)
}

// Vonage sends SMS through Vonage's SMS API (POST /sms/json) and reads its signed
// delivery receipts.
type Vonage struct {
	name      string
	endpoint  string
	key       string
	secret    string
	from      string
	sigSecret string
	sigMethod string
	callback  string
	client    *http.Client
}

// NewVonage checks cfg and returns a Vonage sender.
func NewVonage(cfg VonageConfig) (*Vonage, error) {
	switch {
	case cfg.APIKey == "":
		return nil, errors.New("sms vonage: API key is empty")
	case cfg.APISecret == "":
		return nil, errors.New("sms vonage: API secret is empty")
	case cfg.From == "":
		return nil, errors.New("sms vonage: sender (from) is empty")
	case cfg.Callback != "" && cfg.SignatureSecret == "":
		return nil, errors.New("sms vonage: delivery receipts need the signature secret")
	}
	method := cfg.SignatureMethod
	if method == "" {
		method = VonageMD5Hash
	}
	if !slices.Contains(VonageSignatureMethods(), method) {
		return nil, fmt.Errorf("sms vonage: signature method %q must be one of %s", method, strings.Join(VonageSignatureMethods(), ", "))
	}
	if cfg.Callback != "" {
		if err := checkURL("vonage", "callback URL", cfg.Callback); err != nil {
			return nil, err
		}
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultVonageBaseURL
	}
	if err := checkURL("vonage", "base URL", base); err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = "vonage"
	}
	return &Vonage{
		name:      name,
		endpoint:  strings.TrimRight(base, "/") + "/sms/json",
		key:       cfg.APIKey,
		secret:    cfg.APISecret,
		from:      nationalDigits(cfg.From),
		sigSecret: cfg.SignatureSecret,
		sigMethod: method,
		callback:  cfg.Callback,
		client:    newClient(cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// Name is the instance's name, "vonage" unless configured otherwise.
func (v *Vonage) Name() string { return v.name }

// vonageMessage is one part's entry in the SMS API's reply.
type vonageMessage struct {
	Status    string `json:"status"`
	ID        string `json:"message-id"`
	ErrorText string `json:"error-text"`
}

// vonageInternalError is the status of a message the platform failed on while
// processing it: Vonage does not say whether it went out.
const vonageInternalError = "5"

// Send submits m as one SMS; the provider id is the message id of its first part, which
// its delivery receipt names. The SMS API answers 200 to every well-formed request and
// says in each part's status whether it took it: status 0 is taken; any other (bad
// credentials 4, an invalid or barred number 3, 6, 7, 33, throttled 1, no credit 9…)
// wraps otp.ErrNotDelivered, like a 3xx/4xx reply or a connection that could not be
// opened. Unknown: a 5xx, a timeout, a broken connection, a 2xx reply that cannot be
// read, status 5 (an internal error while processing), and a long message of which some
// parts were taken and others not.
func (v *Vonage) Send(ctx context.Context, m otp.Message) (string, error) {
	if ch := otp.ChannelOf(m); ch != otp.ChannelSMS {
		return "", fmt.Errorf("%s: channel %q: %w", v.name, ch, otp.ErrNotDelivered)
	}
	form := url.Values{
		"api_key":    {v.key},
		"api_secret": {v.secret},
		"from":       {v.from},
		"to":         {nationalDigits(m.To)},
		"text":       {m.Body},
		"type":       {"text"},
	}
	if unicodeText(m) {
		form.Set("type", "unicode")
	}
	if m.ID != "" && len(m.ID) <= 40 {
		form.Set("client-ref", m.ID) // Vonage's own reports then name the send
	}
	if v.callback != "" {
		form.Set("callback", v.callback)
	}
	r, err := postForm(ctx, v.client, v.name, v.endpoint, form, nil)
	if err != nil {
		return "", err
	}
	mask := maskOf(m)
	if r.status < 200 || r.status > 299 {
		return "", statusError(v.name, r, replyDetail(r.body, mask))
	}
	var body struct {
		Messages []vonageMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || len(body.Messages) == 0 {
		return "", fmt.Errorf("%s: status %d naming no message (delivery unknown): %s", v.name, r.status, replyDetail(r.body, mask))
	}
	return vonageOutcome(v.name, body.Messages, mask)
}

// vonageOutcome reads the parts' statuses of one submission.
func vonageOutcome(name string, parts []vonageMessage, mask string) (string, error) {
	var failed []vonageMessage
	for _, p := range parts {
		if p.Status != "0" {
			failed = append(failed, p)
		}
	}
	if len(failed) == 0 {
		return parts[0].ID, nil
	}
	f := failed[0]
	detail := fmt.Sprintf("status %s: %s", snippet(f.Status, ""), snippet(f.ErrorText, mask))
	if len(failed) < len(parts) || slices.ContainsFunc(failed, func(p vonageMessage) bool { return p.Status == vonageInternalError }) {
		return "", fmt.Errorf("%s: %d of %d parts refused, %s (delivery unknown)", name, len(failed), len(parts), detail)
	}
	return "", fmt.Errorf("%s: %s: %w", name, detail, otp.ErrNotDelivered)
}
