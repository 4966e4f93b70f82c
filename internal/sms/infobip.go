package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// InfobipConfig configures an Infobip sender (INFOBIP_* variables).
type InfobipConfig struct {
	// BaseURL is the account's own API root, such as https://xxxxx.api.infobip.com.
	BaseURL string
	// APIKey is sent as "Authorization: App <key>".
	APIKey string
	// From is the sender (alphanumeric or numeric); empty leaves it to the account.
	From string
	// NotifyURL is where Infobip posts each message's delivery reports; empty asks for
	// none of otpgate's own (the account's subscriptions, if any, still apply). It needs
	// WebhookSecret.
	NotifyURL string
	// WebhookSecret keys the token each message carries as callbackData, which is how
	// otpgate tells Infobip's reports from forged ones (see ReadReceipts).
	WebhookSecret string
	// Name is the instance's name in routes, history and metrics; empty means "infobip".
	Name string
	// HTTPClient is used if set (its redirects are turned off); nil builds one.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the API key and the webhook secret, so printing the config cannot leak them.
func (c InfobipConfig) String() string {
	return fmt.Sprintf("{Name:%s BaseURL:%s APIKey:[redacted] From:%s NotifyURL:%s WebhookSecret:[redacted] Timeout:%s}",
		c.Name, redactURL(c.BaseURL), c.From, redactURL(c.NotifyURL), c.Timeout)
}

// LogValue hides the API key and the webhook secret from slog.
func (c InfobipConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("base_url", redactURL(c.BaseURL)),
		slog.String("from", c.From),
		slog.Duration("timeout", c.Timeout),
	)
}

// Infobip sends SMS through Infobip's SMS API (POST /sms/3/messages) and reads the
// delivery reports it pushes.
type Infobip struct {
	name     string
	endpoint string
	key      string
	from     string
	notify   string
	secret   []byte
	client   *http.Client
}

// NewInfobip checks cfg and returns an Infobip sender.
func NewInfobip(cfg InfobipConfig) (*Infobip, error) {
	if !absoluteHTTP(cfg.BaseURL) {
		return nil, fmt.Errorf("sms infobip: base URL %q must be the account's absolute http or https URL", redactURL(cfg.BaseURL))
	}
	if cfg.APIKey == "" {
		return nil, errors.New("sms infobip: API key is empty")
	}
	if cfg.NotifyURL != "" {
		if !absoluteHTTP(cfg.NotifyURL) {
			return nil, fmt.Errorf("sms infobip: notify URL %q must be an absolute http or https URL", redactURL(cfg.NotifyURL))
		}
		if cfg.WebhookSecret == "" {
			return nil, errors.New("sms infobip: a notify URL needs the webhook secret that authenticates its reports")
		}
	}
	name := cfg.Name
	if name == "" {
		name = "infobip"
	}
	return &Infobip{
		name:     name,
		endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/sms/3/messages",
		key:      cfg.APIKey,
		from:     cfg.From,
		notify:   cfg.NotifyURL,
		secret:   []byte(cfg.WebhookSecret),
		client:   newClient(cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// Name is the instance's name, "infobip" unless configured otherwise.
func (b *Infobip) Name() string { return b.name }

// infobipRequest is the body of POST /sms/3/messages, as much of it as otpgate sets.
type infobipRequest struct {
	Messages []infobipMessage `json:"messages"`
}

type infobipMessage struct {
	Sender       string               `json:"sender,omitempty"`
	Destinations []infobipDestination `json:"destinations"`
	Content      struct {
		Text string `json:"text"`
	} `json:"content"`
	Webhooks *infobipWebhooks `json:"webhooks,omitempty"`
}

// infobipDestination is a recipient, in international format without "+", and the
// message id otpgate gives that message.
type infobipDestination struct {
	To        string `json:"to"`
	MessageID string `json:"messageId,omitempty"`
}

type infobipWebhooks struct {
	Delivery struct {
		URL                string `json:"url"`
		IntermediateReport bool   `json:"intermediateReport"`
	} `json:"delivery"`
	ContentType  string `json:"contentType"`
	CallbackData string `json:"callbackData"`
}

// infobipStatus is Infobip's status object, in send replies and delivery reports.
type infobipStatus struct {
	GroupID   int    `json:"groupId"`
	GroupName string `json:"groupName"`
	ID        int    `json:"id"`
	Name      string `json:"name"`
}

// infobipReply covers the send reply and both of Infobip's error bodies: the SMS API's
// {"errorCode","description"} and the older {"requestError":{"serviceException":…}}.
type infobipReply struct {
	Messages []struct {
		MessageID string        `json:"messageId"`
		Status    infobipStatus `json:"status"`
	} `json:"messages"`
	ErrorCode    string `json:"errorCode"`
	Description  string `json:"description"`
	RequestError struct {
		ServiceException struct {
			MessageID string `json:"messageId"`
			Text      string `json:"text"`
		} `json:"serviceException"`
	} `json:"requestError"`
}

// infobipRejected is the status group of a message Infobip or the operator refused
// before sending it.
const infobipRejected = 5

// Send sends an SMS with otpgate's send id as its messageId; the provider id is the
// messageId Infobip answers with, which its delivery reports name. Errors wrap
// otp.ErrNotDelivered for a 3xx/4xx reply (a bad key, a bad request, 429), a message the
// reply says was REJECTED (status group 5: a bad number, no credit…), a connection that
// could not be opened or another channel than SMS; a 5xx, timeout or broken connection
// is unknown.
func (b *Infobip) Send(ctx context.Context, m otp.Message) (string, error) {
	if ch := otp.ChannelOf(m); ch != otp.ChannelSMS {
		return "", fmt.Errorf("%s: channel %q: %w", b.name, ch, otp.ErrNotDelivered)
	}
	msg := infobipMessage{Sender: b.from, Destinations: []infobipDestination{{To: strings.TrimPrefix(m.To, "+"), MessageID: m.ID}}}
	msg.Content.Text = m.Body
	if b.notify != "" && m.ID != "" {
		msg.Webhooks = &infobipWebhooks{ContentType: "application/json", CallbackData: b.token(m.ID)}
		msg.Webhooks.Delivery.URL = b.notify
	}
	r, err := postJSON(ctx, b.client, b.name, b.endpoint, infobipRequest{Messages: []infobipMessage{msg}}, bearer("App", b.key))
	if err != nil {
		return "", err
	}
	var body infobipReply
	jsonErr := json.Unmarshal(r.body, &body)
	if r.status >= 200 && r.status <= 299 {
		if len(body.Messages) == 0 {
			return "", nil
		}
		sent := body.Messages[0]
		if sent.Status.GroupID == infobipRejected || sent.Status.GroupName == "REJECTED" {
			return "", fmt.Errorf("%s: status %d, message rejected: %s (%d): %w",
				b.name, r.status, snippet(sent.Status.Name, m.Body), sent.Status.ID, otp.ErrNotDelivered)
		}
		return sent.MessageID, nil
	}
	detail := replyDetail(r.body, m.Body)
	switch se := body.RequestError.ServiceException; {
	case jsonErr != nil:
	case body.ErrorCode != "" || body.Description != "":
		detail = fmt.Sprintf("%s: %s", snippet(body.ErrorCode, m.Body), snippet(body.Description, m.Body))
	case se.MessageID != "" || se.Text != "":
		detail = fmt.Sprintf("%s: %s", snippet(se.MessageID, m.Body), snippet(se.Text, m.Body))
	}
	return "", statusError(b.name, r, detail)
}
