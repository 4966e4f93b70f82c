package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"otpgate/internal/otp"
)

// WebhookConfig configures a Webhook sender (SMS_WEBHOOK_URL, SMS_WEBHOOK_SECRET).
type WebhookConfig struct {
	// URL receives the POSTs; http or https.
	URL string
	// Secret keys the Otpgate-Signature HMAC; the receiver holds the same one.
	Secret string
	// Name is the instance's name in routes, history and metrics; empty means "webhook".
	Name string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the secret, so printing the config cannot leak it.
func (c WebhookConfig) String() string {
	return fmt.Sprintf("{URL:%s Secret:[redacted] Timeout:%s}", redactURL(c.URL), c.Timeout)
}

// LogValue hides the secret from slog.
func (c WebhookConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", redactURL(c.URL)), slog.Duration("timeout", c.Timeout))
}

// Webhook POSTs each message as signed JSON to a receiver of your own, which
// passes it on to whatever SMS gateway it likes.
type Webhook struct {
	name   string
	url    string
	secret string
	client *http.Client

	// Now stamps the signature; tests replace it.
	Now func() time.Time
}

// NewWebhook checks cfg and returns a Webhook sender.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sms webhook: URL %q must be an absolute http or https URL", redactURL(cfg.URL))
	}
	if cfg.Secret == "" {
		return nil, errors.New("sms webhook: secret is empty")
	}
	name := cfg.Name
	if name == "" {
		name = "webhook"
	}
	return &Webhook{
		name:   name,
		url:    cfg.URL,
		secret: cfg.Secret,
		client: newClient(cfg.HTTPClient, cfg.Timeout),
		Now:    time.Now,
	}, nil
}

// Name is the instance's name, "webhook" unless configured otherwise.
func (w *Webhook) Name() string { return w.name }

// webhookPayload is the JSON the receiver gets; its field order is part of the contract.
type webhookPayload struct {
	ID        string `json:"id"`
	To        string `json:"to"`
	Body      string `json:"body"`
	Locale    string `json:"locale"`
	CreatedAt string `json:"created_at"`
}

// Send POSTs m. Any 2xx is delivered, and a string "id" in a JSON reply is the
// provider id. Errors wrap otp.ErrNotDelivered for a 3xx/4xx reply or a connection
// that could not be opened; a 5xx, timeout or broken connection is unknown.
func (w *Webhook) Send(ctx context.Context, m otp.Message) (string, error) {
	created := m.CreatedAt
	if created.IsZero() {
		created = w.Now()
	}
	raw, err := json.Marshal(webhookPayload{
		ID: m.ID, To: m.To, Body: m.Body, Locale: m.Locale,
		CreatedAt: created.UTC().Format(time.RFC3339),
	})
	if err != nil {
		return "", fmt.Errorf("webhook: encode: %w: %w", otp.ErrNotDelivered, err)
	}
	sign := func(r *http.Request) { r.Header.Set(SignatureHeader, Sign(w.secret, w.Now(), raw)) }
	r, err := post(ctx, w.client, w.name, w.url, "application/json", raw, sign)
	if err != nil {
		return "", err
	}
	if r.status < 200 || r.status > 299 {
		return "", statusError(w.name, r, replyDetail(r.body, m.Body))
	}
	var ack struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(r.body, &ack) == nil {
		if id, ok := ack.ID.(string); ok {
			return id, nil
		}
	}
	return "", nil
}

// redactURL drops the user info and query of u, where credentials tend to hide.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "[unparsable]"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "[redacted]"
	}
	return u.String()
}
