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

// DefaultPlivoBaseURL is the root of Plivo's REST API.
const DefaultPlivoBaseURL = "https://api.plivo.com"

// PlivoConfig configures a sender on Plivo's Message API (PLIVO_* variables).
type PlivoConfig struct {
	AuthID    string
	AuthToken string
	// From is the sender (src): a number in E.164 or an alphanumeric id. PowerpackUUID
	// sends through a Powerpack instead; exactly one of the two is required.
	From          string
	PowerpackUUID string
	// Callback is the URL Plivo posts message status callbacks to; empty asks for none.
	Callback string
	// Name is the instance's name in routes, history and metrics; empty means "plivo".
	Name string
	// BaseURL is the API root; empty means DefaultPlivoBaseURL. Tests point it elsewhere.
	BaseURL string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the auth token, so printing the config cannot leak it.
func (c PlivoConfig) String() string {
	return fmt.Sprintf("{Name:%s AuthID:%s AuthToken:[redacted] From:%s PowerpackUUID:%s Callback:%s BaseURL:%s Timeout:%s}",
		c.Name, c.AuthID, c.From, c.PowerpackUUID, redactURL(c.Callback), redactURL(c.BaseURL), c.Timeout)
}

// LogValue hides the auth token from slog.
func (c PlivoConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("auth_id", c.AuthID),
		slog.String("from", c.From),
		slog.String("powerpack_uuid", c.PowerpackUUID),
		slog.String("base_url", redactURL(c.BaseURL)),
		slog.Duration("timeout", c.Timeout),
	)
}

// Plivo sends SMS through Plivo's Message API and reads its signed status callbacks.
type Plivo struct {
	name      string
	endpoint  string
	id        string
	token     string
	from      string
	powerpack string
	callback  string
	client    *http.Client
}

// NewPlivo checks cfg and returns a Plivo sender.
func NewPlivo(cfg PlivoConfig) (*Plivo, error) {
	switch {
	case cfg.AuthID == "":
		return nil, errors.New("sms plivo: auth ID is empty")
	case cfg.AuthToken == "":
		return nil, errors.New("sms plivo: auth token is empty")
	case (cfg.From == "") == (cfg.PowerpackUUID == ""):
		return nil, errors.New("sms plivo: set a sender (src) or a Powerpack UUID, not both")
	}
	if cfg.Callback != "" {
		if err := checkURL("plivo", "callback URL", cfg.Callback); err != nil {
			return nil, err
		}
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultPlivoBaseURL
	}
	if err := checkURL("plivo", "base URL", base); err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = "plivo"
	}
	return &Plivo{
		name:      name,
		endpoint:  strings.TrimRight(base, "/") + "/v1/Account/" + url.PathEscape(cfg.AuthID) + "/Message/",
		id:        cfg.AuthID,
		token:     cfg.AuthToken,
		from:      cfg.From,
		powerpack: cfg.PowerpackUUID,
		callback:  cfg.Callback,
		client:    newClient(cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// Name is the instance's name, "plivo" unless configured otherwise.
func (p *Plivo) Name() string { return p.name }

// plivoMessage is the Message API's request body.
type plivoMessage struct {
	Src       string `json:"src,omitempty"`
	Powerpack string `json:"powerpack_uuid,omitempty"`
	Dst       string `json:"dst"`
	Text      string `json:"text"`
	Type      string `json:"type"`
	URL       string `json:"url,omitempty"`
	Method    string `json:"method,omitempty"`
}

// plivoReply covers the Message API's answer and its error body.
type plivoReply struct {
	MessageUUID []string `json:"message_uuid"`
	Error       any      `json:"error"`
}

// Send creates one SMS; the provider id is the first of the message_uuid Plivo answers
// with, which its status callbacks name. Errors wrap otp.ErrNotDelivered for a 3xx/4xx
// reply (400 a missing or invalid parameter such as the number, 401 bad credentials,
// 429 too many requests) or a connection that could not be opened; a 5xx, timeout or
// broken connection is unknown.
func (p *Plivo) Send(ctx context.Context, m otp.Message) (string, error) {
	if ch := otp.ChannelOf(m); ch != otp.ChannelSMS {
		return "", fmt.Errorf("%s: channel %q: %w", p.name, ch, otp.ErrNotDelivered)
	}
	msg := plivoMessage{Src: p.from, Powerpack: p.powerpack, Dst: nationalDigits(m.To), Text: m.Body, Type: "sms"}
	if p.callback != "" {
		msg.URL, msg.Method = p.callback, http.MethodPost
	}
	r, err := postJSON(ctx, p.client, p.name, p.endpoint, msg, basicAuth(p.id, p.token))
	if err != nil {
		return "", err
	}
	var body plivoReply
	jsonErr := json.Unmarshal(r.body, &body)
	if r.status >= 200 && r.status <= 299 {
		if len(body.MessageUUID) > 0 {
			return body.MessageUUID[0], nil
		}
		return "", nil
	}
	mask := maskOf(m)
	detail := replyDetail(r.body, mask)
	if jsonErr == nil && body.Error != nil {
		e, ok := body.Error.(string)
		if !ok {
			b, _ := json.Marshal(body.Error)
			e = string(b)
		}
		detail = snippet(e, mask)
	}
	return "", statusError(p.name, r, detail)
}
