package sms_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

const telnyxKey = "KEY0190F3A27C1E_telnyx-secret"

func newTelnyx(t *testing.T, base string, edit func(*sms.TelnyxConfig)) *sms.Telnyx {
	t.Helper()
	cfg := sms.TelnyxConfig{APIKey: telnyxKey, From: "+15005550006", BaseURL: base}
	if edit != nil {
		edit(&cfg)
	}
	s, err := sms.NewTelnyx(cfg)
	if err != nil {
		t.Fatalf("NewTelnyx: %v", err)
	}
	return s
}

func TestTelnyxSend(t *testing.T) {
	ctx := context.Background()

	t.Run("PostsTheMessageWithTheBearerKey", func(t *testing.T) {
		f := smstest.NewTelnyx(t, telnyxKey)
		s := newTelnyx(t, f.URL+"/", func(c *sms.TelnyxConfig) {
			c.WebhookURL = "https://otp.example.com/v1/receipts/telnyx/telnyx"
			c.PublicKey, _ = sms.ParseTelnyxPublicKey(f.PublicKey)
		})
		id, err := s.Send(ctx, message())
		got := f.Received()
		if err != nil || len(got) != 1 || id != got[0].ID {
			t.Fatalf("Send: got %q, %v and %d messages, want the id of one", id, err, len(got))
		}
		want := smstest.TelnyxRequest{ID: id, To: "+819012345678", From: "+15005550006", Text: message().Body, Type: "SMS",
			WebhookURL: "https://otp.example.com/v1/receipts/telnyx/telnyx", Authorization: "Bearer " + telnyxKey, UserAgent: "otpgate", Code: code}
		if got[0] != want {
			t.Errorf("got %+v, want %+v", got[0], want)
		}
	})

	t.Run("SendsThroughTheMessagingProfile", func(t *testing.T) {
		f := smstest.NewTelnyx(t, telnyxKey)
		s := newTelnyx(t, f.URL, func(c *sms.TelnyxConfig) { c.From, c.MessagingProfileID = "", "40017f8e-49bd-4f16-9e3d-ef103f916228" })
		if _, err := s.Send(ctx, message()); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if r := f.Received()[0]; r.From != "" || r.MessagingProfileID != "40017f8e-49bd-4f16-9e3d-ef103f916228" || r.WebhookURL != "" {
			t.Errorf("got %+v, want the profile, no from and no webhook_url", r)
		}
	})

	t.Run("RefusalsAreDefiniteWithTelnyxsCode", func(t *testing.T) {
		for _, c := range []struct {
			name, key, to string
			status        int
			want          string
		}{
			{"WrongKey", "KEY-revoked", "+819012345678", 401, "code 10009: Authentication failed"},
			{"InvalidNumber", telnyxKey, "+81901", 400, "code 40310: Invalid 'to' address"},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := smstest.NewTelnyx(t, telnyxKey)
				m := message()
				m.To = c.to
				_, err := newTelnyx(t, f.URL, func(cfg *sms.TelnyxConfig) { cfg.APIKey = c.key }).Send(ctx, m)
				if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprint(c.status)) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("got %v, want a definite failure with %d and %q", err, c.status, c.want)
				}
				if strings.Contains(fmt.Sprint(err), telnyxKey) || len(f.Received()) != 0 || len(f.Refused()) != 1 {
					t.Errorf("got %v, %d kept and refusals %v, want no key in the error, nothing kept, one refusal", err, len(f.Received()), f.Refused())
				}
			})
		}
	})

	t.Run("TooManyRequestsIsDefinite", func(t *testing.T) {
		f := smstest.NewTelnyx(t, telnyxKey)
		f.Set(smstest.Reply{Status: http.StatusTooManyRequests})
		if _, err := newTelnyx(t, f.URL, nil).Send(ctx, message()); !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "10011") {
			t.Errorf("got %v, want a definite failure with code 10011", err)
		}
	})

	t.Run("ServerErrorIsUnknown", func(t *testing.T) {
		for _, status := range []int{500, 503} {
			f := smstest.NewTelnyx(t, telnyxKey)
			f.Set(smstest.Reply{Status: status})
			_, err := newTelnyx(t, f.URL, nil).Send(ctx, message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "10007") {
				t.Errorf("status %d: got %v, want an unknown outcome with code 10007", status, err)
			}
		}
	})

	t.Run("TimeoutIsUnknown", func(t *testing.T) {
		f := smstest.NewTelnyx(t, telnyxKey)
		f.Set(smstest.Reply{Hang: true})
		_, err := newTelnyx(t, f.URL, func(c *sms.TelnyxConfig) { c.Timeout = time.Hour }).Send(shortCtx(t), message())
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
		if n := len(f.Received()); n != 1 {
			t.Errorf("the fake holds %d messages, want the one that may still go out", n)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		_, err := newTelnyx(t, refusedURL(t), nil).Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || strings.Contains(err.Error(), telnyxKey) {
			t.Errorf("got %v, want an error wrapping ErrNotDelivered without the key", err)
		}
	})

	t.Run("OtherChannelsAreDefiniteAndSendNothing", func(t *testing.T) {
		f := smstest.NewTelnyx(t, telnyxKey)
		m := message()
		m.Channel = otp.ChannelVoice
		if _, err := newTelnyx(t, f.URL, nil).Send(ctx, m); !errors.Is(err, otp.ErrNotDelivered) || len(f.Received()) != 0 {
			t.Errorf("got %v, want ErrNotDelivered and no request", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCode", func(t *testing.T) {
		reply := `{"errors":[{"code":"40009","title":"Invalid message body","detail":"Your code is 483920. It expires in 5 minutes."}]}`
		srv, _ := provider(t, http.StatusBadRequest, "application/json", reply)
		_, err := newTelnyx(t, srv.URL, nil).Send(ctx, message())
		if err == nil || strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), "40009") {
			t.Errorf("got %v, want an error with Telnyx's code and without the OTP", err)
		}
	})
}

func TestNewTelnyx(t *testing.T) {
	short := make([]byte, 16)
	for name, edit := range map[string]func(*sms.TelnyxConfig){
		"NoAPIKey":                 func(c *sms.TelnyxConfig) { c.APIKey = "" },
		"NoSender":                 func(c *sms.TelnyxConfig) { c.From = "" },
		"BadBaseURL":               func(c *sms.TelnyxConfig) { c.BaseURL = "api.telnyx.com" },
		"AWebhookWithoutPublicKey": func(c *sms.TelnyxConfig) { c.WebhookURL = "https://otp.example.com/v1/receipts/telnyx/telnyx" },
		"AShortPublicKey":          func(c *sms.TelnyxConfig) { c.PublicKey = short },
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			cfg := sms.TelnyxConfig{APIKey: telnyxKey, From: "+15005550006"}
			edit(&cfg)
			if s, err := sms.NewTelnyx(cfg); err == nil {
				t.Errorf("got %v, nil, want an error", s)
			}
		})
	}
	t.Run("PublicKeyMustBeBase64Ed25519", func(t *testing.T) {
		for _, bad := range []string{"", "not base64!", "AAAA", "dVxMuSVsp83ErP3Gz+7ahJAX5bn5UU6ZGRvWfgsNQnYA"} {
			if _, err := sms.ParseTelnyxPublicKey(bad); err == nil {
				t.Errorf("%q: got nil, want an error", bad)
			}
		}
		if k, err := sms.ParseTelnyxPublicKey(" dVxMuSVsp83ErP3Gz+7ahJAX5bn5UU6ZGRvWfgsNQnY= "); err != nil || len(k) != 32 {
			t.Errorf("got %d bytes, %v, want the 32-byte key", len(k), err)
		}
	})
	t.Run("NameIsTelnyx", func(t *testing.T) {
		if got := newTelnyx(t, "", nil).Name(); got != "telnyx" {
			t.Errorf("got %q, want telnyx", got)
		}
	})
	t.Run("ConfigHidesTheKey", func(t *testing.T) {
		cfg := sms.TelnyxConfig{APIKey: telnyxKey, From: "+15005550006"}
		for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
			if strings.Contains(out, telnyxKey) {
				t.Errorf("got %q, want no key", out)
			}
		}
	})
	t.Run("SendsNoWebhookURLOfItsOwnWithoutOne", func(t *testing.T) {
		f := smstest.NewTelnyx(t, telnyxKey)
		if _, err := newTelnyx(t, f.URL, nil).Send(context.Background(), message()); err != nil || slices.ContainsFunc(f.Received(), func(r smstest.TelnyxRequest) bool { return r.WebhookURL != "" }) {
			t.Errorf("got %v, %+v, want a message without webhook_url", err, f.Received())
		}
	})
}
