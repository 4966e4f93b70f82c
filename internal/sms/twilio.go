package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// DefaultTwilioBaseURL is Twilio's REST API.
const DefaultTwilioBaseURL = "https://api.twilio.com"

// TwilioConfig configures a Twilio sender (TWILIO_* variables).
type TwilioConfig struct {
	AccountSID string
	AuthToken  string
	// From is the sending number or alphanumeric sender id.
	From string
	// MessagingServiceSID sends through a messaging service instead of (or, if
	// both are set, together with) From; at least one of the two is required.
	MessagingServiceSID string
	// BaseURL is the API root; empty means DefaultTwilioBaseURL. Tests point it elsewhere.
	BaseURL string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the auth token, so printing the config cannot leak it.
func (c TwilioConfig) String() string {
	return fmt.Sprintf("{AccountSID:%s AuthToken:[redacted] From:%s MessagingServiceSID:%s BaseURL:%s Timeout:%s}",
		c.AccountSID, c.From, c.MessagingServiceSID, redactURL(c.BaseURL), c.Timeout)
}

// LogValue hides the auth token from slog.
func (c TwilioConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("account_sid", c.AccountSID),
		slog.String("from", c.From),
		slog.String("messaging_service_sid", c.MessagingServiceSID),
		slog.String("base_url", redactURL(c.BaseURL)),
		slog.Duration("timeout", c.Timeout),
	)
}

// Twilio sends through Twilio's Messages API.
type Twilio struct {
	endpoint string
	sid      string
	token    string
	from     string
	service  string
	client   *http.Client
}

// NewTwilio checks cfg and returns a Twilio sender.
func NewTwilio(cfg TwilioConfig) (*Twilio, error) {
	if cfg.AccountSID == "" {
		return nil, errors.New("sms twilio: account SID is empty")
	}
	if cfg.AuthToken == "" {
		return nil, errors.New("sms twilio: auth token is empty")
	}
	if cfg.From == "" && cfg.MessagingServiceSID == "" {
		return nil, errors.New("sms twilio: set a From number or a messaging service SID")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultTwilioBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sms twilio: base URL %q must be an absolute http or https URL", redactURL(base))
	}
	return &Twilio{
		endpoint: strings.TrimRight(base, "/") + "/2010-04-01/Accounts/" + url.PathEscape(cfg.AccountSID) + "/Messages.json",
		sid:      cfg.AccountSID,
		token:    cfg.AuthToken,
		from:     cfg.From,
		service:  cfg.MessagingServiceSID,
		client:   newClient(cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// Name is "twilio".
func (t *Twilio) Name() string { return "twilio" }

// twilioReply covers both the message resource and Twilio's error body.
type twilioReply struct {
	SID     string `json:"sid"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Send creates a message; the provider id is its SID. Errors wrap
// otp.ErrNotDelivered for a 3xx/4xx reply (a bad number, bad credentials, 429) or
// a connection that could not be opened; a 5xx, timeout or broken connection is unknown.
func (t *Twilio) Send(ctx context.Context, m otp.Message) (string, error) {
	form := url.Values{"To": {m.To}, "Body": {m.Body}}
	if t.from != "" {
		form.Set("From", t.from)
	}
	if t.service != "" {
		form.Set("MessagingServiceSid", t.service)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("twilio: build request: %w: %w", otp.ErrNotDelivered, err)
	}
	req.SetBasicAuth(t.sid, t.token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "otpgate")

	r, err := do(t.client, req)
	if err != nil {
		return "", transportError("twilio", err)
	}
	var body twilioReply
	jsonErr := json.Unmarshal(r.body, &body)
	if r.status >= 200 && r.status <= 299 {
		return body.SID, nil
	}
	detail := replyDetail(r.body, m.Body)
	if jsonErr == nil && (body.Code != 0 || body.Message != "") {
		detail = fmt.Sprintf("code %d: %s", body.Code, snippet(body.Message, m.Body))
	}
	return "", statusError("twilio", r, detail)
}
