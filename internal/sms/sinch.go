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

// SinchRegions are the regions of Sinch's SMS REST API; an account lives in one.
func SinchRegions() []string { return []string{"us", "eu", "au", "br", "ca"} }

// SinchBaseURL is the API root of a region: https://<region>.sms.api.sinch.com.
func SinchBaseURL(region string) string { return "https://" + region + ".sms.api.sinch.com" }

// SinchConfig configures a sender on Sinch's SMS REST API (SINCH_* variables).
type SinchConfig struct {
	// ServicePlanID names the service plan in every path; APIToken is its bearer token.
	ServicePlanID string
	APIToken      string
	// From is the sender (a number, short code or alphanumeric id); empty lets the
	// service plan's default originator send.
	From string
	// Region picks the API root when BaseURL is empty (SinchRegions; empty means "us").
	Region string
	// CallbackSecret is the HMAC secret Sinch signs the service plan's callbacks with
	// once its account manager turned HMAC on.
	CallbackSecret string
	// Callback is the URL Sinch posts delivery reports to; empty asks for none. It needs
	// CallbackSecret: an unsigned report cannot be told from a forged one.
	Callback string
	// Name is the instance's name in routes, history and metrics; empty means "sinch".
	Name string
	// BaseURL is the API root; empty means the region's. Tests point it elsewhere.
	BaseURL string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the token and the secret, so printing the config cannot leak them.
func (c SinchConfig) String() string {
	return fmt.Sprintf("{Name:%s ServicePlanID:%s APIToken:[redacted] From:%s Region:%s CallbackSecret:[redacted] Callback:%s BaseURL:%s Timeout:%s}",
		c.Name, c.ServicePlanID, c.From, c.Region, redactURL(c.Callback), redactURL(c.BaseURL), c.Timeout)
}

// LogValue hides the token and the secret from slog.
func (c SinchConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("service_plan_id", c.ServicePlanID),
		slog.String("from", c.From),
		slog.String("region", c.Region),
		slog.String("base_url", redactURL(c.BaseURL)),
		slog.Duration("timeout", c.Timeout),
	)
}

// Sinch sends SMS as one-recipient batches through Sinch's SMS REST API and reads its
// HMAC-signed delivery reports.
type Sinch struct {
	name     string
	endpoint string
	token    string
	from     string
	secret   string
	callback string
	client   *http.Client
}

// NewSinch checks cfg and returns a Sinch sender.
func NewSinch(cfg SinchConfig) (*Sinch, error) {
	region := cfg.Region
	if region == "" {
		region = "us"
	}
	switch {
	case cfg.ServicePlanID == "":
		return nil, errors.New("sms sinch: service plan ID is empty")
	case cfg.APIToken == "":
		return nil, errors.New("sms sinch: API token is empty")
	case !slices.Contains(SinchRegions(), region):
		return nil, fmt.Errorf("sms sinch: region %q must be one of %s", region, strings.Join(SinchRegions(), ", "))
	case cfg.Callback != "" && cfg.CallbackSecret == "":
		return nil, errors.New("sms sinch: delivery reports need the callback secret")
	}
	if cfg.Callback != "" {
		if err := checkURL("sinch", "callback URL", cfg.Callback); err != nil {
			return nil, err
		}
	}
	base := cfg.BaseURL
	if base == "" {
		base = SinchBaseURL(region)
	}
	if err := checkURL("sinch", "base URL", base); err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = "sinch"
	}
	return &Sinch{
		name:     name,
		endpoint: strings.TrimRight(base, "/") + "/xms/v1/" + url.PathEscape(cfg.ServicePlanID) + "/batches",
		token:    cfg.APIToken,
		from:     cfg.From,
		secret:   cfg.CallbackSecret,
		callback: cfg.Callback,
		client:   newClient(cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// Name is the instance's name, "sinch" unless configured otherwise.
func (s *Sinch) Name() string { return s.name }

// sinchBatch is the batches resource's request body for a text message.
type sinchBatch struct {
	From            string   `json:"from,omitempty"`
	To              []string `json:"to"`
	Body            string   `json:"body"`
	Type            string   `json:"type"`
	DeliveryReport  string   `json:"delivery_report,omitempty"`
	CallbackURL     string   `json:"callback_url,omitempty"`
	ClientReference string   `json:"client_reference,omitempty"`
}

// sinchReply covers the created batch and Sinch's error body.
type sinchReply struct {
	ID   string `json:"id"`
	Code string `json:"code"`
	Text string `json:"text"`
}

// Send creates a batch of one text message; the provider id is the batch's id, which
// its delivery reports name. Errors wrap otp.ErrNotDelivered for a 3xx/4xx reply (400 a
// request Sinch cannot take, such as a malformed number; 401 and 403 a bad token or
// service plan; 429 too many requests) or a connection that could not be opened; a 5xx,
// timeout or broken connection is unknown.
func (s *Sinch) Send(ctx context.Context, m otp.Message) (string, error) {
	if ch := otp.ChannelOf(m); ch != otp.ChannelSMS {
		return "", fmt.Errorf("%s: channel %q: %w", s.name, ch, otp.ErrNotDelivered)
	}
	batch := sinchBatch{From: s.from, To: []string{m.To}, Body: m.Body, Type: "mt_text", ClientReference: m.ID}
	if s.callback != "" {
		// The final state alone: the steps before it would each cost a callback.
		batch.DeliveryReport, batch.CallbackURL = "per_recipient_final", s.callback
	}
	r, err := postJSON(ctx, s.client, s.name, s.endpoint, batch, bearer("Bearer", s.token))
	if err != nil {
		return "", err
	}
	var body sinchReply
	jsonErr := json.Unmarshal(r.body, &body)
	if r.status >= 200 && r.status <= 299 {
		return body.ID, nil
	}
	mask := maskOf(m)
	detail := replyDetail(r.body, mask)
	if jsonErr == nil && (body.Code != "" || body.Text != "") {
		detail = snippet(body.Code, "") + ": " + snippet(body.Text, mask)
	}
	return "", statusError(s.name, r, detail)
}
