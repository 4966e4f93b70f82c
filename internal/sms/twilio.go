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
	// WhatsAppFrom is the WhatsApp sender number in E.164 (without "whatsapp:").
	WhatsAppFrom string
	// WhatsAppContentSID is the approved content template (HX…) a WhatsApp message is
	// sent with, the code as its variable {{1}}; empty sends the rendered text as Body,
	// which WhatsApp only delivers inside a conversation the user opened.
	WhatsAppContentSID string
	// VoiceFrom is the number calls come from; empty means From.
	VoiceFrom string
	// StatusCallback is the URL Twilio reports delivery to; empty asks for no reports.
	StatusCallback string
	// Name is the instance's name in routes, history and metrics; empty means "twilio".
	Name string
	// BaseURL is the API root; empty means DefaultTwilioBaseURL. Tests point it elsewhere.
	BaseURL string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the auth token, so printing the config cannot leak it.
func (c TwilioConfig) String() string {
	return fmt.Sprintf("{Name:%s AccountSID:%s AuthToken:[redacted] From:%s MessagingServiceSID:%s WhatsAppFrom:%s VoiceFrom:%s BaseURL:%s Timeout:%s}",
		c.Name, c.AccountSID, c.From, c.MessagingServiceSID, c.WhatsAppFrom, c.VoiceFrom, redactURL(c.BaseURL), c.Timeout)
}

// LogValue hides the auth token from slog.
func (c TwilioConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("account_sid", c.AccountSID),
		slog.String("from", c.From),
		slog.String("messaging_service_sid", c.MessagingServiceSID),
		slog.String("base_url", redactURL(c.BaseURL)),
		slog.Duration("timeout", c.Timeout),
	)
}

// Twilio sends SMS and WhatsApp messages through Twilio's Messages API and makes voice
// calls through its Calls API.
type Twilio struct {
	name     string
	endpoint string // the Messages resource
	calls    string // the Calls resource
	sid      string
	token    string
	from     string
	service  string
	whatsApp string
	content  string
	voice    string
	callback string
	client   *http.Client

	// Now stamps delivery receipts; tests replace it.
	Now func() time.Time
}

// NewTwilio checks cfg and returns a Twilio sender.
func NewTwilio(cfg TwilioConfig) (*Twilio, error) {
	if cfg.AccountSID == "" {
		return nil, errors.New("sms twilio: account SID is empty")
	}
	if cfg.AuthToken == "" {
		return nil, errors.New("sms twilio: auth token is empty")
	}
	if cfg.From == "" && cfg.MessagingServiceSID == "" && cfg.WhatsAppFrom == "" && cfg.VoiceFrom == "" {
		return nil, errors.New("sms twilio: set a From number or a messaging service SID")
	}
	if cfg.StatusCallback != "" {
		if u, err := url.Parse(cfg.StatusCallback); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("sms twilio: status callback %q must be an absolute http or https URL", redactURL(cfg.StatusCallback))
		}
	}
	name := cfg.Name
	if name == "" {
		name = "twilio"
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultTwilioBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sms twilio: base URL %q must be an absolute http or https URL", redactURL(base))
	}
	account := strings.TrimRight(base, "/") + "/2010-04-01/Accounts/" + url.PathEscape(cfg.AccountSID)
	voice := cfg.VoiceFrom
	if voice == "" && strings.HasPrefix(cfg.From, "+") {
		voice = cfg.From // an alphanumeric sender id cannot place calls
	}
	return &Twilio{
		name:     name,
		endpoint: account + "/Messages.json",
		calls:    account + "/Calls.json",
		sid:      cfg.AccountSID,
		token:    cfg.AuthToken,
		from:     cfg.From,
		service:  cfg.MessagingServiceSID,
		whatsApp: cfg.WhatsAppFrom,
		content:  cfg.WhatsAppContentSID,
		voice:    voice,
		callback: cfg.StatusCallback,
		client:   newClient(cfg.HTTPClient, cfg.Timeout),
		Now:      time.Now,
	}, nil
}

// Name is the instance's name, "twilio" unless configured otherwise.
func (t *Twilio) Name() string { return t.name }

// Channels lists the channels this account is configured for.
func (t *Twilio) Channels() []string {
	var out []string
	if t.from != "" || t.service != "" {
		out = append(out, otp.ChannelSMS)
	}
	if t.whatsApp != "" {
		out = append(out, otp.ChannelWhatsApp)
	}
	if t.voice != "" {
		out = append(out, otp.ChannelVoice)
	}
	return out
}

// twilioReply covers both the message resource and Twilio's error body.
type twilioReply struct {
	SID     string `json:"sid"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Send creates an SMS or WhatsApp message, or places a voice call, by m's channel; the
// provider id is the message's or call's SID. Errors wrap otp.ErrNotDelivered for a
// 3xx/4xx reply (a bad number, bad credentials, 429), a connection that could not be
// opened or a channel this account is not configured for; a 5xx, timeout or broken
// connection is unknown.
func (t *Twilio) Send(ctx context.Context, m otp.Message) (string, error) {
	form := url.Values{}
	endpoint := t.endpoint
	switch ch := otp.ChannelOf(m); ch {
	case otp.ChannelSMS:
		form.Set("To", m.To)
		form.Set("Body", m.Body)
		if t.from != "" {
			form.Set("From", t.from)
		}
		if t.service != "" {
			form.Set("MessagingServiceSid", t.service)
		}
	case otp.ChannelWhatsApp:
		if t.whatsApp == "" {
			return "", fmt.Errorf("%s: no WhatsApp sender configured: %w", t.name, otp.ErrNotDelivered)
		}
		form.Set("To", "whatsapp:"+m.To)
		form.Set("From", "whatsapp:"+t.whatsApp)
		if t.content != "" {
			vars, _ := json.Marshal(map[string]string{"1": m.Code})
			form.Set("ContentSid", t.content)
			form.Set("ContentVariables", string(vars))
		} else {
			form.Set("Body", m.Body)
		}
	case otp.ChannelVoice:
		if t.voice == "" {
			return "", fmt.Errorf("%s: no number to call from configured: %w", t.name, otp.ErrNotDelivered)
		}
		endpoint = t.calls
		form.Set("To", m.To)
		form.Set("From", t.voice)
		form.Set("Twiml", TwiML(m.Locale, m.Body))
	default:
		return "", fmt.Errorf("%s: channel %q: %w", t.name, ch, otp.ErrNotDelivered)
	}
	if t.callback != "" {
		form.Set("StatusCallback", t.callback)
	}
	secret := m.Body
	if m.Code != "" && !strings.Contains(secret, m.Code) {
		secret += " " + m.Code
	}
	return t.post(ctx, endpoint, form, secret)
}

// post sends one form to the API; secret is masked in any reply quoted in an error.
func (t *Twilio) post(ctx context.Context, endpoint string, form url.Values, secret string) (string, error) {
	r, err := postForm(ctx, t.client, t.name, endpoint, form, basicAuth(t.sid, t.token))
	if err != nil {
		return "", err
	}
	var body twilioReply
	jsonErr := json.Unmarshal(r.body, &body)
	if r.status >= 200 && r.status <= 299 {
		return body.SID, nil
	}
	detail := replyDetail(r.body, secret)
	if jsonErr == nil && (body.Code != 0 || body.Message != "") {
		detail = fmt.Sprintf("code %d: %s", body.Code, snippet(body.Message, secret))
	}
	return "", statusError(t.name, r, detail)
}
