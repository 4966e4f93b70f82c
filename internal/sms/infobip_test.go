package sms_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

const (
	infobipKey    = "0123456789abcdef0123456789abcdef-infobip-key"
	infobipSecret = "infobip-webhook-secret"
)

func newInfobip(t *testing.T, base string, edit func(*sms.InfobipConfig)) *sms.Infobip {
	t.Helper()
	cfg := sms.InfobipConfig{BaseURL: base, APIKey: infobipKey, From: "InfoSMS"}
	if edit != nil {
		edit(&cfg)
	}
	s, err := sms.NewInfobip(cfg)
	if err != nil {
		t.Fatalf("NewInfobip: %v", err)
	}
	return s
}

func TestInfobipSend(t *testing.T) {
	ctx := context.Background()

	t.Run("PostsTheMessageWithTheAppKey", func(t *testing.T) {
		f := smstest.NewInfobip(t, infobipKey)
		const notify = "https://otp.example.com/v1/receipts/infobip/infobip"
		s := newInfobip(t, f.URL+"/", func(c *sms.InfobipConfig) { c.NotifyURL, c.WebhookSecret = notify, infobipSecret })
		m := message()
		id, err := s.Send(ctx, m)
		got := f.Received()
		if err != nil || len(got) != 1 || id != m.ID {
			t.Fatalf("Send: got %q, %v and %d messages, want the send's id as Infobip's messageId", id, err, len(got))
		}
		want := smstest.InfobipRequest{MessageID: m.ID, To: "819012345678", Sender: "InfoSMS", Text: m.Body,
			NotifyURL: notify, ContentType: "application/json", CallbackData: sms.InfobipCallbackToken([]byte(infobipSecret), m.ID),
			Authorization: "App " + infobipKey, Code: code}
		if got[0] != want {
			t.Errorf("got %+v, want %+v", got[0], want)
		}
	})

	t.Run("WithoutANotifyURLAsksForNoReports", func(t *testing.T) {
		f := smstest.NewInfobip(t, infobipKey)
		if _, err := newInfobip(t, f.URL, func(c *sms.InfobipConfig) { c.From = "" }).Send(ctx, message()); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if r := f.Received()[0]; r.NotifyURL != "" || r.CallbackData != "" || r.Sender != "" {
			t.Errorf("got %+v, want no webhooks and no sender", r)
		}
	})

	t.Run("WrongKeyIsDefinite", func(t *testing.T) {
		f := smstest.NewInfobip(t, infobipKey)
		_, err := newInfobip(t, f.URL, func(c *sms.InfobipConfig) { c.APIKey = "revoked" }).Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status 401: E401: Invalid login details") {
			t.Errorf("got %v, want a definite failure with 401 and E401", err)
		}
		if strings.Contains(fmt.Sprint(err), infobipKey) || len(f.Received()) != 0 || strings.Join(f.Refused(), ",") != "E401" {
			t.Errorf("got %v, %d kept, refusals %v, want no key, nothing kept, one E401", err, len(f.Received()), f.Refused())
		}
	})

	t.Run("RejectedDestinationIsDefinite", func(t *testing.T) {
		f := smstest.NewInfobip(t, infobipKey)
		m := message()
		m.To = "+0123"
		_, err := newInfobip(t, f.URL, nil).Send(ctx, m)
		if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "REJECTED_INVALID_DESTINATION (52)") {
			t.Errorf("got %v, want a definite failure naming the rejection", err)
		}
		if len(f.Received()) != 0 || len(f.Refused()) != 1 {
			t.Errorf("got %d kept and refusals %v, want none and one", len(f.Received()), f.Refused())
		}
	})

	t.Run("ClientErrorsAreDefinite", func(t *testing.T) {
		for _, status := range []int{400, 403, 429} {
			f := smstest.NewInfobip(t, infobipKey)
			f.Set(smstest.Reply{Status: status})
			_, err := newInfobip(t, f.URL, nil).Send(ctx, message())
			if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprintf("E%d", status)) {
				t.Errorf("status %d: got %v, want a definite failure with Infobip's errorCode", status, err)
			}
		}
	})

	t.Run("TheOlderErrorBodyIsQuotedToo", func(t *testing.T) {
		srv, _ := provider(t, http.StatusUnauthorized, "application/json",
			`{"requestError":{"serviceException":{"messageId":"UNAUTHORIZED","text":"Invalid login details"}}}`)
		_, err := newInfobip(t, srv.URL, nil).Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "UNAUTHORIZED: Invalid login details") {
			t.Errorf("got %v, want a definite failure quoting the service exception", err)
		}
	})

	t.Run("ServerErrorIsUnknown", func(t *testing.T) {
		for _, status := range []int{500, 503} {
			f := smstest.NewInfobip(t, infobipKey)
			f.Set(smstest.Reply{Status: status})
			_, err := newInfobip(t, f.URL, nil).Send(ctx, message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprintf("E%d", status)) {
				t.Errorf("status %d: got %v, want an unknown outcome with Infobip's errorCode", status, err)
			}
		}
	})

	t.Run("TimeoutIsUnknown", func(t *testing.T) {
		f := smstest.NewInfobip(t, infobipKey)
		f.Set(smstest.Reply{Hang: true})
		_, err := newInfobip(t, f.URL, func(c *sms.InfobipConfig) { c.Timeout = time.Hour }).Send(shortCtx(t), message())
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		_, err := newInfobip(t, refusedURL(t), nil).Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || strings.Contains(err.Error(), infobipKey) {
			t.Errorf("got %v, want an error wrapping ErrNotDelivered without the key", err)
		}
	})

	t.Run("OtherChannelsAreDefiniteAndSendNothing", func(t *testing.T) {
		f := smstest.NewInfobip(t, infobipKey)
		m := message()
		m.Channel = otp.ChannelWhatsApp
		if _, err := newInfobip(t, f.URL, nil).Send(ctx, m); !errors.Is(err, otp.ErrNotDelivered) || len(f.Received()) != 0 {
			t.Errorf("got %v, want ErrNotDelivered and no request", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCode", func(t *testing.T) {
		srv, _ := provider(t, http.StatusBadRequest, "application/json", `{"errorCode":"E400","description":"text 'Your code is 483920. It expires in 5 minutes.' refused"}`)
		if _, err := newInfobip(t, srv.URL, nil).Send(ctx, message()); err == nil || strings.Contains(err.Error(), code) {
			t.Errorf("got %v, want an error without the OTP", err)
		}
	})
}

func TestNewInfobip(t *testing.T) {
	for name, edit := range map[string]func(*sms.InfobipConfig){
		"NoBaseURL":                func(c *sms.InfobipConfig) { c.BaseURL = "" },
		"ARelativeBaseURL":         func(c *sms.InfobipConfig) { c.BaseURL = "xyz.api.infobip.com" },
		"NoAPIKey":                 func(c *sms.InfobipConfig) { c.APIKey = "" },
		"ANotifyURLWithoutASecret": func(c *sms.InfobipConfig) { c.NotifyURL = "https://otp.example.com/v1/receipts/infobip/infobip" },
		"ARelativeNotifyURL": func(c *sms.InfobipConfig) {
			c.NotifyURL, c.WebhookSecret = "/v1/receipts/infobip/infobip", infobipSecret
		},
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			cfg := sms.InfobipConfig{BaseURL: "https://xyz.api.infobip.com", APIKey: infobipKey}
			edit(&cfg)
			if s, err := sms.NewInfobip(cfg); err == nil {
				t.Errorf("got %v, nil, want an error", s)
			}
		})
	}
	t.Run("ConfigHidesTheKeyAndTheSecret", func(t *testing.T) {
		cfg := sms.InfobipConfig{BaseURL: "https://xyz.api.infobip.com", APIKey: infobipKey, WebhookSecret: infobipSecret}
		for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
			if strings.Contains(out, infobipKey) || strings.Contains(out, infobipSecret) {
				t.Errorf("got %q, want neither the key nor the secret", out)
			}
		}
	})
	t.Run("NameIsInfobip", func(t *testing.T) {
		if got := newInfobip(t, "https://xyz.api.infobip.com", nil).Name(); got != "infobip" {
			t.Errorf("got %q, want infobip", got)
		}
	})
}
