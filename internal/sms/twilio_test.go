package sms_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
)

const (
	twilioSID   = "AC0123456789abcdef0123456789abcdef"
	twilioToken = "tok-5f1e9a7c3b2d"
)

func newTwilio(t *testing.T, base string, edit func(*sms.TwilioConfig)) *sms.Twilio {
	t.Helper()
	cfg := sms.TwilioConfig{AccountSID: twilioSID, AuthToken: twilioToken, From: "+15005550006", BaseURL: base}
	if edit != nil {
		edit(&cfg)
	}
	s, err := sms.NewTwilio(cfg)
	if err != nil {
		t.Fatalf("NewTwilio: %v", err)
	}
	return s
}

const twilioCreated = `{"sid":"SM0123456789abcdef0123456789abcdef","status":"queued","to":"+819012345678"}`

func TestTwilioSend(t *testing.T) {
	t.Run("PostsTheFormWithBasicAuth", func(t *testing.T) {
		srv, got := provider(t, http.StatusCreated, "application/json", twilioCreated)
		id, err := newTwilio(t, srv.URL+"/", nil).Send(context.Background(), message())
		if err != nil || id != "SM0123456789abcdef0123456789abcdef" {
			t.Fatalf("Send: got %q, %v, want the message SID, nil", id, err)
		}
		r := one(t, got)
		wantPath := "/2010-04-01/Accounts/" + twilioSID + "/Messages.json"
		if r.Method != http.MethodPost || r.Path != wantPath || r.Query != "" {
			t.Errorf("request: got %s %s?%s, want POST %s", r.Method, r.Path, r.Query, wantPath)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
			t.Errorf("Content-Type: got %q, want application/x-www-form-urlencoded", ct)
		}
		req := http.Request{Header: r.Header}
		user, pass, ok := req.BasicAuth()
		if !ok || user != twilioSID || pass != twilioToken {
			t.Errorf("basic auth: got %q, %q, %v, want the SID and token", user, pass, ok)
		}
		form, err := url.ParseQuery(string(r.Body))
		if err != nil {
			t.Fatalf("parse form %q: %v", r.Body, err)
		}
		want := url.Values{
			"To":   {"+819012345678"},
			"From": {"+15005550006"},
			"Body": {"Your code is 483920. It expires in 5 minutes."},
		}
		if !reflect.DeepEqual(form, want) {
			t.Errorf("form: got %v, want %v", form, want)
		}
	})

	t.Run("UsesTheMessagingService", func(t *testing.T) {
		srv, got := provider(t, http.StatusCreated, "application/json", twilioCreated)
		s := newTwilio(t, srv.URL, func(c *sms.TwilioConfig) { c.From, c.MessagingServiceSID = "", "MG0123" })
		m := message()
		m.Body = "認証コード: 483920（5分間有効）"
		if _, err := s.Send(context.Background(), m); err != nil {
			t.Fatalf("Send: got %v, want nil", err)
		}
		form, err := url.ParseQuery(string(one(t, got).Body))
		if err != nil {
			t.Fatalf("parse form: %v", err)
		}
		want := url.Values{"To": {"+819012345678"}, "MessagingServiceSid": {"MG0123"}, "Body": {m.Body}}
		if !reflect.DeepEqual(form, want) {
			t.Errorf("form: got %v, want %v", form, want)
		}
	})

	t.Run("OKWithoutSIDIsDelivered", func(t *testing.T) {
		srv, _ := provider(t, http.StatusOK, "text/plain", "accepted")
		id, err := newTwilio(t, srv.URL, nil).Send(context.Background(), message())
		if err != nil || id != "" {
			t.Errorf("got %q, %v, want \"\", nil", id, err)
		}
	})

	t.Run("ClientErrorIsDefiniteWithCodeAndMessage", func(t *testing.T) {
		for _, tc := range []struct {
			status int
			reply  string
			want   string
		}{
			{400, `{"code":21211,"message":"The 'To' number +819012345678 is not a valid phone number.","more_info":"https://www.twilio.com/docs/errors/21211","status":400}`,
				"code 21211: The 'To' number +819012345678 is not a valid phone number."},
			{401, `{"code":20003,"message":"Authenticate","status":401}`, "code 20003: Authenticate"},
			{429, `{"code":20429,"message":"Too Many Requests","status":429}`, "code 20429: Too Many Requests"},
			{404, `<html>not found</html>`, "<html>not found</html>"},
		} {
			srv, _ := provider(t, tc.status, "application/json", tc.reply)
			_, err := newTwilio(t, srv.URL, nil).Send(context.Background(), message())
			if !errors.Is(err, otp.ErrNotDelivered) {
				t.Errorf("status %d: got %v, want an error wrapping ErrNotDelivered", tc.status, err)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprint(tc.status)) || !strings.Contains(msg, tc.want) {
				t.Errorf("status %d: got %q, want the status and %q in it", tc.status, msg, tc.want)
			}
			if strings.Contains(err.Error(), twilioToken) {
				t.Errorf("status %d: error %q shows the auth token", tc.status, err)
			}
		}
	})

	t.Run("ServerErrorIsUnknown", func(t *testing.T) {
		for _, status := range []int{500, 503} {
			srv, _ := provider(t, status, "application/json", `{"code":20500,"message":"Internal Server Error","status":500}`)
			_, err := newTwilio(t, srv.URL, nil).Send(context.Background(), message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "20500") {
				t.Errorf("status %d: got %v, want an error with the code, not wrapping ErrNotDelivered", status, err)
			}
		}
	})

	t.Run("TimeoutIsUnknown", func(t *testing.T) {
		srv, release := stalling(t)
		s := newTwilio(t, srv.URL, func(c *sms.TwilioConfig) { c.Timeout = time.Hour })
		_, err := s.Send(shortCtx(t), message())
		release()
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
	})

	t.Run("GivenClientGetsATimeoutBackstop", func(t *testing.T) {
		srv, release := stalling(t)
		s := newTwilio(t, srv.URL, func(c *sms.TwilioConfig) {
			c.HTTPClient, c.Timeout = &http.Client{}, 100*time.Millisecond
		})
		_, err := s.Send(context.Background(), message())
		release()
		if err == nil || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want an error not wrapping ErrNotDelivered", err)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		_, err := newTwilio(t, refusedURL(t), nil).Send(context.Background(), message())
		if !errors.Is(err, otp.ErrNotDelivered) || strings.Contains(err.Error(), twilioToken) {
			t.Errorf("got %v, want an error wrapping ErrNotDelivered without the token", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCode", func(t *testing.T) {
		reply := `{"code":21617,"message":"Body 'Your code is 483920. It expires in 5 minutes.' too long","status":400}`
		srv, _ := provider(t, http.StatusBadRequest, "application/json", reply)
		_, err := newTwilio(t, srv.URL, nil).Send(context.Background(), message())
		if err == nil || strings.Contains(err.Error(), code) {
			t.Errorf("got %v, want an error without the code", err)
		}
	})
}

func TestNewTwilio(t *testing.T) {
	for name, edit := range map[string]func(*sms.TwilioConfig){
		"NoAccountSID": func(c *sms.TwilioConfig) { c.AccountSID = "" },
		"NoAuthToken":  func(c *sms.TwilioConfig) { c.AuthToken = "" },
		"NoSender":     func(c *sms.TwilioConfig) { c.From = "" },
		"BadBaseURL":   func(c *sms.TwilioConfig) { c.BaseURL = "api.example.com" },
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			cfg := sms.TwilioConfig{AccountSID: twilioSID, AuthToken: twilioToken, From: "+15005550006"}
			edit(&cfg)
			if s, err := sms.NewTwilio(cfg); err == nil {
				t.Errorf("got %v, nil, want an error", s)
			}
		})
	}
	t.Run("NameIsTwilio", func(t *testing.T) {
		if got := newTwilio(t, "", nil).Name(); got != "twilio" {
			t.Errorf("got %q, want twilio", got)
		}
	})
	t.Run("ConfigHidesTheToken", func(t *testing.T) {
		cfg := sms.TwilioConfig{AccountSID: twilioSID, AuthToken: twilioToken}
		for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
			if strings.Contains(out, twilioToken) {
				t.Errorf("got %q, want no token", out)
			}
		}
	})
}
