package sms_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

var sinchPlan = smstest.SinchPlan{ServicePlanID: "jd63jf88477ll123ab4567cd89012ef3", APIToken: "sinch-token-8e2b", CallbackSecret: "sinch-hmac-secret"}

func newSinch(t *testing.T, base string, edit func(*sms.SinchConfig)) *sms.Sinch {
	t.Helper()
	cfg := sms.SinchConfig{ServicePlanID: sinchPlan.ServicePlanID, APIToken: sinchPlan.APIToken, From: "+12015550100",
		CallbackSecret: sinchPlan.CallbackSecret, BaseURL: base}
	if edit != nil {
		edit(&cfg)
	}
	s, err := sms.NewSinch(cfg)
	if err != nil {
		t.Fatalf("NewSinch: %v", err)
	}
	return s
}

func TestSinchSend(t *testing.T) {
	ctx := context.Background()

	t.Run("PostsTheBatchTheAPIReferenceDescribes", func(t *testing.T) {
		f := smstest.NewSinch(t, sinchPlan)
		s := newSinch(t, f.URL+"/", func(c *sms.SinchConfig) { c.Callback = "https://otp.example.com/v1/receipts/sinch/sinch" })
		m := message()
		id, err := s.Send(ctx, m)
		got := f.Received()
		if err != nil || len(got) != 1 || id != got[0].ID {
			t.Fatalf("Send: got %q, %v and %+v, want the id of one batch", id, err, got)
		}
		want := smstest.SinchRequest{ID: id, From: "+12015550100", To: "+819012345678", Body: m.Body, Type: "mt_text",
			DeliveryReport: "per_recipient_final", CallbackURL: "https://otp.example.com/v1/receipts/sinch/sinch", ClientReference: m.ID, Code: code}
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("got %+v, want %+v", got[0], want)
		}
	})

	t.Run("WithoutCallbacksAsksForNoReport", func(t *testing.T) {
		f := smstest.NewSinch(t, sinchPlan)
		if _, err := newSinch(t, f.URL, func(c *sms.SinchConfig) { c.From = "" }).Send(ctx, message()); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if r := f.Received()[0]; r.From != "" || r.DeliveryReport != "" || r.CallbackURL != "" {
			t.Errorf("got %+v, want the plan's default sender and no report", r)
		}
	})

	t.Run("TheRegionPicksTheHost", func(t *testing.T) {
		if got := sms.SinchBaseURL("eu"); got != "https://eu.sms.api.sinch.com" {
			t.Errorf("got %s", got)
		}
	})

	t.Run("ClientErrorsAreDefinite", func(t *testing.T) {
		for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests} {
			f := smstest.NewSinch(t, sinchPlan)
			f.Set(smstest.Reply{Status: status})
			_, err := newSinch(t, f.URL, nil).Send(ctx, message())
			if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprintf("status %d: told_to_fail: told to fail", status)) {
				t.Errorf("status %d: got %v, want a definite failure with Sinch's code and text", status, err)
			}
			if len(f.Received()) != 0 {
				t.Errorf("status %d: the fake kept the batch", status)
			}
		}
	})

	t.Run("WrongTokenIsDefinite", func(t *testing.T) {
		f, err := smstest.StartSinch(sinchPlan)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = newSinch(t, f.URL, func(c *sms.SinchConfig) { c.APIToken = "wrong-token-31" }).Send(ctx, message())
		if n, _ := f.Bad(); !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status 401") || n != 1 {
			t.Errorf("got %v and %d refused requests, want a definite 401", err, n)
		}
		if strings.Contains(err.Error(), "wrong-token-31") {
			t.Errorf("error %q shows the token", err)
		}
	})

	t.Run("AnInvalidNumberIsDefinite", func(t *testing.T) {
		f, err := smstest.StartSinch(sinchPlan)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m := message()
		m.To = "819012345678"
		_, err = newSinch(t, f.URL, nil).Send(ctx, m)
		if n, _ := f.Bad(); !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status 400: syntax_invalid_parameter_format") || n != 1 {
			t.Errorf("got %v and %d refused requests, want a definite 400 syntax_invalid_parameter_format", err, n)
		}
	})

	t.Run("ServerErrorIsUnknown", func(t *testing.T) {
		for _, status := range []int{500, 503} {
			f := smstest.NewSinch(t, sinchPlan)
			f.Set(smstest.Reply{Status: status})
			_, err := newSinch(t, f.URL, nil).Send(ctx, message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "told to fail") {
				t.Errorf("status %d: got %v, want an unknown outcome", status, err)
			}
		}
	})

	t.Run("TimeoutIsUnknown", func(t *testing.T) {
		f := smstest.NewSinch(t, sinchPlan)
		f.Set(smstest.Reply{Hang: true})
		_, err := newSinch(t, f.URL, func(c *sms.SinchConfig) { c.Timeout = time.Hour }).Send(shortCtx(t), message())
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		if _, err := newSinch(t, refusedURL(t), nil).Send(ctx, message()); !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want a definite failure", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCode", func(t *testing.T) {
		srv, _ := provider(t, http.StatusBadRequest, "application/json", `{"code":"syntax_constraint_violation","text":"body 'Your code is 483920. It expires in 5 minutes.' too long"}`)
		if _, err := newSinch(t, srv.URL, nil).Send(ctx, message()); err == nil || strings.Contains(err.Error(), code) {
			t.Errorf("got %v, want an error without the code", err)
		}
	})

	t.Run("OtherChannelsAreDefiniteAndSendNothing", func(t *testing.T) {
		f := smstest.NewSinch(t, sinchPlan)
		m := message()
		m.Channel = otp.ChannelVoice
		if _, err := newSinch(t, f.URL, nil).Send(ctx, m); !errors.Is(err, otp.ErrNotDelivered) || len(f.Received()) != 0 {
			t.Errorf("got %v, want a definite failure and no request", err)
		}
	})
}

func TestNewSinch(t *testing.T) {
	for name, edit := range map[string]func(*sms.SinchConfig){
		"NoServicePlan":            func(c *sms.SinchConfig) { c.ServicePlanID = "" },
		"NoToken":                  func(c *sms.SinchConfig) { c.APIToken = "" },
		"UnknownRegion":            func(c *sms.SinchConfig) { c.Region = "mars" },
		"CallbackWithoutTheSecret": func(c *sms.SinchConfig) { c.CallbackSecret, c.Callback = "", "https://otp.example.com/r" },
		"CallbackNotAbsolute":      func(c *sms.SinchConfig) { c.Callback = "/v1/receipts/sinch/sinch" },
		"BadBaseURL":               func(c *sms.SinchConfig) { c.BaseURL = "us.sms.api.sinch.com" },
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			cfg := sms.SinchConfig{ServicePlanID: "plan", APIToken: "t", CallbackSecret: "s"}
			edit(&cfg)
			if s, err := sms.NewSinch(cfg); err == nil {
				t.Errorf("got %v, nil, want an error", s)
			}
		})
	}
	t.Run("ConfigHidesTheSecrets", func(t *testing.T) {
		cfg := sms.SinchConfig{ServicePlanID: "plan", APIToken: "sinch-token-8e2b", CallbackSecret: "sinch-hmac-secret"}
		for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
			if strings.Contains(out, "sinch-token-8e2b") || strings.Contains(out, "sinch-hmac-secret") {
				t.Errorf("got %q, want no secret", out)
			}
		}
	})
}

// TestSinchSignature holds the signature to Sinch's description, the signed string
// written out by hand: the raw body, ".", the nonce, ".", the timestamp.
func TestSinchSignature(t *testing.T) {
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write([]byte(`{"a":1}.n0nce.1700000000`))
	if got, want := sms.SinchSignature("secret", []byte(`{"a":1}`), "n0nce", "1700000000"), base64.StdEncoding.EncodeToString(mac.Sum(nil)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
