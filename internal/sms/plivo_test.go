package sms_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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
	"otpgate/internal/sms/smstest"
)

var plivoAccount = smstest.PlivoAccount{AuthID: "MAXXXXXXXXXXXXXXXXXX", AuthToken: "plivo-token-4c1d"}

func newPlivo(t *testing.T, base string, edit func(*sms.PlivoConfig)) *sms.Plivo {
	t.Helper()
	cfg := sms.PlivoConfig{AuthID: plivoAccount.AuthID, AuthToken: plivoAccount.AuthToken, From: "+14155550100", BaseURL: base}
	if edit != nil {
		edit(&cfg)
	}
	s, err := sms.NewPlivo(cfg)
	if err != nil {
		t.Fatalf("NewPlivo: %v", err)
	}
	return s
}

func TestPlivoSend(t *testing.T) {
	ctx := context.Background()

	t.Run("PostsTheJSONTheAPIReferenceDescribes", func(t *testing.T) {
		f := smstest.NewPlivo(t, plivoAccount)
		s := newPlivo(t, f.URL+"/", func(c *sms.PlivoConfig) { c.Callback = "https://otp.example.com/v1/receipts/plivo/plivo" })
		m := message()
		id, err := s.Send(ctx, m)
		got := f.Received()
		if err != nil || len(got) != 1 || id != got[0].UUID {
			t.Fatalf("Send: got %q, %v and %+v, want the message_uuid of one message", id, err, got)
		}
		want := smstest.PlivoRequest{UUID: id, Src: "+14155550100", Dst: "819012345678", Text: m.Body, Type: "sms",
			CallbackURL: "https://otp.example.com/v1/receipts/plivo/plivo", Method: "POST", Code: code}
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("got %+v, want %+v", got[0], want)
		}
	})

	t.Run("SendsThroughAPowerpack", func(t *testing.T) {
		f := smstest.NewPlivo(t, plivoAccount)
		s := newPlivo(t, f.URL, func(c *sms.PlivoConfig) { c.From, c.PowerpackUUID = "", "d35f2e82-d387-427f-8594-6fa07613c43a" })
		if _, err := s.Send(ctx, message()); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if r := f.Received()[0]; r.Src != "" || r.Powerpack != "d35f2e82-d387-427f-8594-6fa07613c43a" || r.CallbackURL != "" || r.Method != "" {
			t.Errorf("got %+v, want the Powerpack without src and no callback", r)
		}
	})

	t.Run("ClientErrorsAreDefinite", func(t *testing.T) {
		for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusTooManyRequests} {
			f := smstest.NewPlivo(t, plivoAccount)
			f.Set(smstest.Reply{Status: status})
			_, err := newPlivo(t, f.URL, nil).Send(ctx, message())
			if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprintf("status %d: told to fail", status)) {
				t.Errorf("status %d: got %v, want a definite failure quoting Plivo's error", status, err)
			}
			if len(f.Received()) != 0 {
				t.Errorf("status %d: the fake kept the message", status)
			}
		}
	})

	t.Run("WrongCredentialsAreDefinite", func(t *testing.T) {
		f, err := smstest.StartPlivo(plivoAccount)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = newPlivo(t, f.URL, func(c *sms.PlivoConfig) { c.AuthToken = "wrong-token-77" }).Send(ctx, message())
		if n, _ := f.Bad(); !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status 401") || n != 1 {
			t.Errorf("got %v and %d refused requests, want a definite 401", err, n)
		}
		if strings.Contains(err.Error(), "wrong-token-77") {
			t.Errorf("error %q shows the token", err)
		}
	})

	t.Run("AnInvalidNumberIsDefinite", func(t *testing.T) {
		f, err := smstest.StartPlivo(plivoAccount)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m := message()
		m.To = "+0123"
		_, err = newPlivo(t, f.URL, nil).Send(ctx, m)
		if n, _ := f.Bad(); !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status 400") || !strings.Contains(err.Error(), "dst") || n != 1 {
			t.Errorf("got %v and %d refused requests, want a definite 400 naming dst", err, n)
		}
	})

	t.Run("ServerErrorIsUnknown", func(t *testing.T) {
		for _, status := range []int{500, 503} {
			f := smstest.NewPlivo(t, plivoAccount)
			f.Set(smstest.Reply{Status: status})
			_, err := newPlivo(t, f.URL, nil).Send(ctx, message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "told to fail") {
				t.Errorf("status %d: got %v, want an unknown outcome quoting Plivo's error", status, err)
			}
		}
	})

	t.Run("TimeoutIsUnknown", func(t *testing.T) {
		f := smstest.NewPlivo(t, plivoAccount)
		f.Set(smstest.Reply{Hang: true})
		_, err := newPlivo(t, f.URL, func(c *sms.PlivoConfig) { c.Timeout = time.Hour }).Send(shortCtx(t), message())
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		if _, err := newPlivo(t, refusedURL(t), nil).Send(ctx, message()); !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want a definite failure", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCode", func(t *testing.T) {
		srv, _ := provider(t, http.StatusBadRequest, "application/json", `{"api_id":"x","error":"text 'Your code is 483920. It expires in 5 minutes.' is invalid"}`)
		if _, err := newPlivo(t, srv.URL, nil).Send(ctx, message()); err == nil || strings.Contains(err.Error(), code) {
			t.Errorf("got %v, want an error without the code", err)
		}
	})

	t.Run("OtherChannelsAreDefiniteAndSendNothing", func(t *testing.T) {
		f := smstest.NewPlivo(t, plivoAccount)
		m := message()
		m.Channel = otp.ChannelWhatsApp
		if _, err := newPlivo(t, f.URL, nil).Send(ctx, m); !errors.Is(err, otp.ErrNotDelivered) || len(f.Received()) != 0 {
			t.Errorf("got %v, want a definite failure and no request", err)
		}
	})
}

func TestNewPlivo(t *testing.T) {
	for name, edit := range map[string]func(*sms.PlivoConfig){
		"NoAuthID":            func(c *sms.PlivoConfig) { c.AuthID = "" },
		"NoAuthToken":         func(c *sms.PlivoConfig) { c.AuthToken = "" },
		"NoSender":            func(c *sms.PlivoConfig) { c.From = "" },
		"SenderAndPowerpack":  func(c *sms.PlivoConfig) { c.PowerpackUUID = "d35f2e82" },
		"CallbackNotAbsolute": func(c *sms.PlivoConfig) { c.Callback = "/v1/receipts/plivo/plivo" },
		"BadBaseURL":          func(c *sms.PlivoConfig) { c.BaseURL = "api.plivo.com" },
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			cfg := sms.PlivoConfig{AuthID: "MA1", AuthToken: "t", From: "+14155550100"}
			edit(&cfg)
			if s, err := sms.NewPlivo(cfg); err == nil {
				t.Errorf("got %v, nil, want an error", s)
			}
		})
	}
	t.Run("ConfigHidesTheToken", func(t *testing.T) {
		cfg := sms.PlivoConfig{AuthID: "MA1", AuthToken: "plivo-token-4c1d"}
		for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
			if strings.Contains(out, "plivo-token-4c1d") {
				t.Errorf("got %q, want no token", out)
			}
		}
	})
}

// TestPlivoSignatures holds the signatures to Plivo's descriptions, the signed strings
// written out by hand: V2 the URL without its query followed by the nonce; V3 the URL,
// "?", each parameter's name and value (names sorted, a name's values sorted), ".", the
// nonce.
func TestPlivoSignatures(t *testing.T) {
	mac := func(s string) string {
		h := hmac.New(sha256.New, []byte("token"))
		h.Write([]byte(s))
		return base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	const u, nonce = "https://otp.example.com/v1/receipts/plivo/eu", "05429567804466091622"
	if got, want := sms.PlivoSignatureV2("token", u+"?x=1", nonce), mac(u+nonce); got != want {
		t.Errorf("V2: got %s, want %s", got, want)
	}
	form := url.Values{"Status": {"delivered"}, "MessageUUID": {"abc"}, "B": {"2", "1"}}
	if got, want := sms.PlivoSignatureV3("token", u, nonce, form), mac(u+"?B1B2MessageUUIDabcStatusdelivered."+nonce); got != want {
		t.Errorf("V3: got %s, want %s", got, want)
	}
	if got, want := sms.PlivoSignatureV3("token", u, nonce, nil), mac(u+"."+nonce); got != want {
		t.Errorf("V3 without parameters: got %s, want %s", got, want)
	}
}
