package sms

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
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

// DefaultTelnyxBaseURL is Telnyx's API root.
const DefaultTelnyxBaseURL = "https://api.telnyx.com"

// TelnyxConfig configures a Telnyx sender (TELNYX_* variables).
type TelnyxConfig struct {
	// APIKey is the account's API v2 key, sent as a bearer token.
	APIKey string
	// From is the sending number (+E.164), short code or alphanumeric sender id.
	From string
	// MessagingProfileID sends through a messaging profile (its number pool, or an
	// alphanumeric sender); at least one of From and MessagingProfileID is required.
	MessagingProfileID string
	// PublicKey is the account's Ed25519 public key (ParseTelnyxPublicKey), which checks
	// the signatures of delivery webhooks; nil takes no webhooks.
	PublicKey ed25519.PublicKey
	// WebhookURL is where Telnyx posts each message's delivery webhooks; empty asks for
	// none of its own (the messaging profile's webhooks, if any, still apply). It needs
	// PublicKey.
	WebhookURL string
	// Name is the instance's name in routes, history and metrics; empty means "telnyx".
	Name string
	// BaseURL is the API root; empty means DefaultTelnyxBaseURL. Tests point it elsewhere.
	BaseURL string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the API key, so printing the config cannot leak it.
func (c TelnyxConfig) String() string {
	return fmt.Sprintf("{Name:%s APIKey:[redacted] From:%s MessagingProfileID:%s WebhookURL:%s BaseURL:%s Timeout:%s}",
		c.Name, c.From, c.MessagingProfileID, redactURL(c.WebhookURL), redactURL(c.BaseURL), c.Timeout)
}

// LogValue hides the API key from slog.
func (c TelnyxConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("from", c.From),
		slog.String("messaging_profile_id", c.MessagingProfileID),
		slog.String("base_url", redactURL(c.BaseURL)),
		slog.Duration("timeout", c.Timeout),
	)
}

// Telnyx sends SMS through Telnyx's Messages API (v2) and reads its delivery webhooks.
type Telnyx struct {
	name     string
	endpoint string
	key      string
	from     string
	profile  string
	webhook  string
	public   ed25519.PublicKey // nil: no webhooks are taken
	client   *http.Client
}

// NewTelnyx checks cfg and returns a Telnyx sender.
func NewTelnyx(cfg TelnyxConfig) (*Telnyx, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("sms telnyx: API key is empty")
	}
	if cfg.From == "" && cfg.MessagingProfileID == "" {
		return nil, errors.New("sms telnyx: set a From number or a messaging profile id")
	}
	public := cfg.PublicKey
	if public != nil && len(public) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("sms telnyx: the public key has %d bytes, want %d", len(public), ed25519.PublicKeySize)
	}
	if cfg.WebhookURL != "" {
		if !absoluteHTTP(cfg.WebhookURL) {
			return nil, fmt.Errorf("sms telnyx: webhook URL %q must be an absolute http or https URL", redactURL(cfg.WebhookURL))
		}
		if public == nil {
			return nil, errors.New("sms telnyx: a webhook URL needs the public key that checks the webhooks' signatures")
		}
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultTelnyxBaseURL
	}
	if !absoluteHTTP(base) {
		return nil, fmt.Errorf("sms telnyx: base URL %q must be an absolute http or https URL", redactURL(base))
	}
	name := cfg.Name
	if name == "" {
		name = "telnyx"
	}
	return &Telnyx{
		name:     name,
		endpoint: strings.TrimRight(base, "/") + "/v2/messages",
		key:      cfg.APIKey,
		from:     cfg.From,
		profile:  cfg.MessagingProfileID,
		webhook:  cfg.WebhookURL,
		public:   public,
		client:   newClient(cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// ParseTelnyxPublicKey reads the account's public key as Telnyx's portal shows it: an
// Ed25519 key of 32 bytes in base64.
func ParseTelnyxPublicKey(s string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("not an Ed25519 public key in base64 (32 bytes), as Telnyx's portal shows it")
	}
	return raw, nil
}

// absoluteHTTP reports whether s is an absolute http or https URL.
func absoluteHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Name is the instance's name, "telnyx" unless configured otherwise.
func (t *Telnyx) Name() string { return t.name }

// telnyxMessage is the body of POST /v2/messages, as much of it as otpgate sets.
type telnyxMessage struct {
	From               string `json:"from,omitempty"`
	MessagingProfileID string `json:"messaging_profile_id,omitempty"`
	To                 string `json:"to"`
	Text               string `json:"text"`
	Type               string `json:"type"`
	WebhookURL         string `json:"webhook_url,omitempty"`
}

// telnyxReply covers both the created message ({"data":{…}}) and Telnyx's error body
// ({"errors":[{"code","title","detail"}]}).
type telnyxReply struct {
	Data struct {
		ID string `json:"id"`
	} `json:"data"`
	Errors []struct {
		Code   string `json:"code"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

// Send creates an SMS; the provider id is the message's id, which its delivery webhooks
// name. Errors wrap otp.ErrNotDelivered for a 3xx/4xx reply (a bad number, a bad key,
// 429), a connection that could not be opened or another channel than SMS; a 5xx,
// timeout or broken connection is unknown.
func (t *Telnyx) Send(ctx context.Context, m otp.Message) (string, error) {
	if ch := otp.ChannelOf(m); ch != otp.ChannelSMS {
		return "", fmt.Errorf("%s: channel %q: %w", t.name, ch, otp.ErrNotDelivered)
	}
	msg := telnyxMessage{
		From: t.from, MessagingProfileID: t.profile, To: m.To, Text: m.Body, Type: "SMS", WebhookURL: t.webhook,
	}
	r, err := postJSON(ctx, t.client, t.name, t.endpoint, msg, bearer("Bearer", t.key))
	if err != nil {
		return "", err
	}
	var body telnyxReply
	jsonErr := json.Unmarshal(r.body, &body)
	if r.status >= 200 && r.status <= 299 {
		return body.Data.ID, nil
	}
	detail := replyDetail(r.body, m.Body)
	if jsonErr == nil && len(body.Errors) > 0 {
		e := body.Errors[0]
		detail = fmt.Sprintf("code %s: %s", snippet(e.Code, m.Body), snippet(strings.TrimSuffix(e.Title+": "+e.Detail, ": "), m.Body))
	}
	return "", statusError(t.name, r, detail)
}
