package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"otpgate/internal/delivery"
	"otpgate/internal/email"
	"otpgate/internal/message"
	"otpgate/internal/metrics"
	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

// deliveryParts carry messages: the router over every provider instance, the renderer
// of their text, and the readers of the instances' delivery receipts by source name.
type deliveryParts struct {
	router   *delivery.Router
	renderer otp.Renderer
	readers  map[string]otp.ReceiptReader
}

// newDelivery builds a sender per provider instance (each counted in metrics under its
// name), the routes and breakers over them, and the message catalog.
func newDelivery(cfg config, log *slog.Logger, mx *metrics.Metrics) (*deliveryParts, error) {
	catalog, err := message.New(nil)
	if err != nil {
		return nil, err
	}
	d := &deliveryParts{renderer: mx.Renderer(catalog), readers: map[string]otp.ReceiptReader{}}
	var providers []delivery.Provider
	for _, s := range cfg.instances {
		sender, channels, err := newInstance(cfg, s, log)
		if err != nil {
			return nil, err
		}
		switch r := sender.(type) {
		case *sms.Twilio:
			if cfg.PublicURL != "" {
				d.readers["twilio/"+s.Name] = r
			}
		case *sms.Webhook:
			d.readers["webhook/"+s.Name] = r
		}
		providers = append(providers, delivery.Provider{Name: s.Name, Channels: channels, Sender: mx.Sender(sender)})
	}
	mx.Providers(cfg.instanceNames()...)
	routes := map[string]delivery.Routes{}
	for _, t := range cfg.routeTables() {
		if t.routes == nil {
			continue
		}
		if err := carried(t, providers); err != nil {
			return nil, err
		}
		routes[t.channel] = t.routes
	}
	d.router, err = delivery.New(delivery.Config{
		Providers: providers, Routes: routes, FailoverOnUnknown: cfg.FailoverOnUnknown,
		Breaker:        delivery.BreakerConfig{Failures: cfg.BreakerFailures, Cooldown: cfg.BreakerCooldown},
		AttemptTimeout: cfg.SMSTimeout, Observer: mx.DeliveryObserver(),
	})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return d, nil
}

// carried refuses a route table that sends a channel to an instance not configured for
// it, such as a Twilio account without TWILIO_VOICE_FROM in VOICE_ROUTES.
func carried(t routeTable, providers []delivery.Provider) error {
	for _, r := range t.routes {
		for _, name := range r.Providers {
			i := slices.IndexFunc(providers, func(p delivery.Provider) bool { return p.Name == name })
			if i >= 0 && !slices.Contains(providers[i].Channels, t.channel) {
				return fmt.Errorf("config: %s=%q: provider %s is not configured for %s (it carries %s)",
					t.variable, t.routes.String(), name, t.channel, strings.Join(providers[i].Channels, ", "))
			}
		}
	}
	return nil
}

// newInstance builds one instance's sender and the channels it carries. The log sender
// shows codes in dev mode only.
func newInstance(cfg config, s instanceSettings, log *slog.Logger) (otp.Sender, []string, error) {
	switch s.Kind {
	case "log":
		l := sms.NewLog(log.With("component", "sms", "provider", s.Name))
		l.ShowCodes = cfg.dev
		return named{l, s.Name}, l.Channels(), nil
	case "webhook":
		w, err := sms.NewWebhook(sms.WebhookConfig{URL: s.WebhookURL, Secret: s.WebhookSecret, Name: s.Name, Timeout: cfg.SMSTimeout})
		if err != nil {
			return nil, nil, fmt.Errorf("config: %s: %w", s.env("SMS_WEBHOOK_URL"), err)
		}
		return w, []string{otp.ChannelSMS}, nil
	case "twilio":
		callback := ""
		if cfg.PublicURL != "" {
			callback = strings.TrimRight(cfg.PublicURL, "/") + "/v1/receipts/twilio/" + s.Name
		}
		t, err := sms.NewTwilio(sms.TwilioConfig{
			Name: s.Name, AccountSID: s.TwilioAccountSID, AuthToken: s.TwilioAuthToken,
			From: s.TwilioFrom, MessagingServiceSID: s.TwilioMessagingSID,
			WhatsAppFrom: s.TwilioWhatsAppFrom, WhatsAppContentSID: s.TwilioWhatsAppContentSID, VoiceFrom: s.TwilioVoiceFrom,
			StatusCallback: callback, BaseURL: s.TwilioBaseURL, Timeout: cfg.SMSTimeout,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("config: provider %s: %w", s.Name, err)
		}
		return t, t.Channels(), nil
	case "smtp":
		c := email.Config{URL: s.SMTPURL, From: s.SMTPFrom, Name: s.Name}
		if s.SMTPCAFile != "" {
			pem, err := os.ReadFile(s.SMTPCAFile)
			if err != nil {
				return nil, nil, fmt.Errorf("config: %s: %w", s.env("SMTP_CA_FILE"), err)
			}
			roots := x509.NewCertPool()
			if !roots.AppendCertsFromPEM(pem) {
				return nil, nil, fmt.Errorf("config: %s=%s: no PEM certificate in it", s.env("SMTP_CA_FILE"), s.SMTPCAFile)
			}
			c.TLS = &tls.Config{RootCAs: roots}
		}
		m, err := email.New(c)
		if err != nil {
			return nil, nil, fmt.Errorf("config: %s, %s: %w", s.env("SMTP_URL"), s.env("SMTP_FROM"), err)
		}
		return m, []string{otp.ChannelEmail}, nil
	}
	return nil, nil, fmt.Errorf("config: provider %s: unknown kind %q", s.Name, s.Kind)
}

// named gives a sender the name of its instance, for a log sender called otherwise.
type named struct {
	otp.Sender
	name string
}

func (n named) Name() string { return n.name }
