package sms_test

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
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

var vonageAccount = smstest.VonageAccount{APIKey: "abcd1234", APISecret: "abcdef0123456789",
	SignatureSecret: "vonage-signature-secret", SignatureMethod: sms.VonageSHA256HMAC}

func newVonage(t *testing.T, base string, edit func(*sms.VonageConfig)) *sms.Vonage {
	t.Helper()
	cfg := sms.VonageConfig{APIKey: vonageAccount.APIKey, APISecret: vonageAccount.APISecret, From: "+447700900000",
		SignatureSecret: vonageAccount.SignatureSecret, SignatureMethod: vonageAccount.SignatureMethod, BaseURL: base}
	if edit != nil {
		edit(&cfg)
	}
	s, err := sms.NewVonage(cfg)
	if err != nil {
		t.Fatalf("NewVonage: %v", err)
	}
	return s
}

func TestVonageSend(t *testing.T) {
	ctx := context.Background()

	t.Run("PostsTheFormTheAPIReferenceDescribes", func(t *testing.T) {
		f := smstest.NewVonage(t, vonageAccount)
		s := newVonage(t, f.URL+"/", func(c *sms.VonageConfig) { c.Callback = "https://otp.example.com/v1/receipts/vonage/vonage" })
		m := message()
		id, err := s.Send(ctx, m)
		got := f.Received()
		if err != nil || len(got) != 1 || len(got[0].IDs) != 1 || id != got[0].IDs[0] {
			t.Fatalf("Send: got %q, %v and %+v, want the id of one message", id, err, got)
		}
		want := smstest.VonageRequest{IDs: got[0].IDs, From: "447700900000", To: "819012345678", Text: m.Body, Type: "text",
			Callback: "https://otp.example.com/v1/receipts/vonage/vonage", ClientRef: m.ID, Code: code}
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("got %+v, want %+v", got[0], want)
		}
	})

	t.Run("UnicodeTextGoesAsUnicode", func(t *testing.T) {
		f := smstest.NewVonage(t, vonageAccount)
		m := message()
		m.Body, m.Encoding = "認証コード: 483920（5分間有効）", otp.EncodingUCS2
		if _, err := newVonage(t, f.URL, nil).Send(ctx, m); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if r := f.Received()[0]; r.Type != "unicode" || r.Text != m.Body || r.Callback != "" {
			t.Errorf("got %+v, want the text as unicode and no callback", r)
		}
	})

	t.Run("ALongTextIsNamedByItsFirstPart", func(t *testing.T) {
		f := smstest.NewVonage(t, vonageAccount)
		m := message()
		m.Body += strings.Repeat(" And more words.", 10)
		id, err := newVonage(t, f.URL, nil).Send(ctx, m)
		if r := f.Received()[0]; err != nil || len(r.IDs) != 2 || id != r.IDs[0] {
			t.Errorf("got %q, %v for parts %v, want the first part's id", id, err, r.IDs)
		}
	})

	t.Run("RefusalsAreDefinite", func(t *testing.T) {
		for _, c := range []struct{ status, text string }{
			{"1", "Throttled"}, {"3", "Invalid to parameter"}, {"4", "Bad Credentials"}, {"6", "Invalid Message"},
			{"7", "Number Barred"}, {"9", "Partner Quota Violation"}, {"15", "Illegal Sender Address - rejected"}, {"33", "Number De-activated"},
		} {
			f := smstest.NewVonage(t, vonageAccount)
			f.Refuse(c.status, c.text)
			_, err := newVonage(t, f.URL, nil).Send(ctx, message())
			if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status "+c.status+": "+c.text) {
				t.Errorf("status %s: got %v, want a definite failure naming the status and its text", c.status, err)
			}
			if len(f.Received()) != 0 {
				t.Errorf("status %s: the fake kept the message", c.status)
			}
		}
	})

	t.Run("WrongCredentialsAreDefinite", func(t *testing.T) {
		f, err := smstest.StartVonage(vonageAccount)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = newVonage(t, f.URL, func(c *sms.VonageConfig) { c.APISecret = "0123456789abcdef" }).Send(ctx, message())
		if n, _ := f.Bad(); !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status 4") || n != 1 {
			t.Errorf("got %v and %d refused requests, want a definite failure with status 4", err, n)
		}
		if strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("error %q shows the secret", err)
		}
	})

	t.Run("InternalErrorIsUnknown", func(t *testing.T) {
		f := smstest.NewVonage(t, vonageAccount)
		f.Refuse("5", "Internal Error")
		_, err := newVonage(t, f.URL, nil).Send(ctx, message())
		if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "status 5") {
			t.Errorf("got %v, want an unknown outcome naming status 5", err)
		}
	})

	t.Run("ServerErrorIsUnknown", func(t *testing.T) {
		for _, status := range []int{500, 502, 503} {
			f := smstest.NewVonage(t, vonageAccount)
			f.Set(smstest.Reply{Status: status})
			_, err := newVonage(t, f.URL, nil).Send(ctx, message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprint(status)) {
				t.Errorf("status %d: got %v, want an unknown outcome", status, err)
			}
		}
	})

	t.Run("HTTPClientErrorIsDefinite", func(t *testing.T) {
		srv, _ := provider(t, http.StatusUnauthorized, "application/json", `{"title":"Unauthorized"}`)
		if _, err := newVonage(t, srv.URL, nil).Send(ctx, message()); !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want a definite failure", err)
		}
	})

	t.Run("AnswersThatNameNoOutcomeAreUnknown", func(t *testing.T) {
		for name, reply := range map[string]string{
			"NotJSON":     `<html>ok</html>`,
			"NoMessages":  `{"message-count":"0","messages":[]}`,
			"PartlyTaken": `{"message-count":"2","messages":[{"status":"0","message-id":"0A01"},{"status":"3","error-text":"Invalid"}]}`,
		} {
			srv, _ := provider(t, http.StatusOK, "application/json", reply)
			_, err := newVonage(t, srv.URL, nil).Send(ctx, message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) {
				t.Errorf("%s: got %v, want an unknown outcome", name, err)
			}
		}
	})

	t.Run("TimeoutIsUnknown", func(t *testing.T) {
		f := smstest.NewVonage(t, vonageAccount)
		f.Set(smstest.Reply{Hang: true})
		_, err := newVonage(t, f.URL, func(c *sms.VonageConfig) { c.Timeout = time.Hour }).Send(shortCtx(t), message())
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		if _, err := newVonage(t, refusedURL(t), nil).Send(ctx, message()); !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want a definite failure", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCode", func(t *testing.T) {
		f := smstest.NewVonage(t, vonageAccount)
		f.Refuse("6", "Invalid Message: 'Your code is 483920. It expires in 5 minutes.'")
		if _, err := newVonage(t, f.URL, nil).Send(ctx, message()); err == nil || strings.Contains(err.Error(), code) {
			t.Errorf("got %v, want an error without the code", err)
		}
	})

	t.Run("OtherChannelsAreDefiniteAndSendNothing", func(t *testing.T) {
		f := smstest.NewVonage(t, vonageAccount)
		m := message()
		m.Channel = otp.ChannelVoice
		if _, err := newVonage(t, f.URL, nil).Send(ctx, m); !errors.Is(err, otp.ErrNotDelivered) || len(f.Received()) != 0 {
			t.Errorf("got %v, want a definite failure and no request", err)
		}
	})
}

func TestNewVonage(t *testing.T) {
	for name, edit := range map[string]func(*sms.VonageConfig){
		"NoAPIKey":                   func(c *sms.VonageConfig) { c.APIKey = "" },
		"NoAPISecret":                func(c *sms.VonageConfig) { c.APISecret = "" },
		"NoSender":                   func(c *sms.VonageConfig) { c.From = "" },
		"UnknownSignatureMethod":     func(c *sms.VonageConfig) { c.SignatureMethod = "sha384" },
		"CallbackWithoutTheSecret":   func(c *sms.VonageConfig) { c.SignatureSecret, c.Callback = "", "https://otp.example.com/r" },
		"CallbackThatIsNotAnHTTPURL": func(c *sms.VonageConfig) { c.Callback = "otp.example.com/r" },
		"BadBaseURL":                 func(c *sms.VonageConfig) { c.BaseURL = "rest.nexmo.com" },
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			cfg := sms.VonageConfig{APIKey: "abcd1234", APISecret: "abcdef0123456789", From: "Example", SignatureSecret: "s"}
			edit(&cfg)
			if s, err := sms.NewVonage(cfg); err == nil {
				t.Errorf("got %v, nil, want an error", s)
			}
		})
	}
	t.Run("ConfigHidesTheSecrets", func(t *testing.T) {
		cfg := sms.VonageConfig{APIKey: "abcd1234", APISecret: "api-secret-5f1e", SignatureSecret: "sig-secret-9a7c"}
		for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
			if strings.Contains(out, "api-secret-5f1e") || strings.Contains(out, "sig-secret-9a7c") {
				t.Errorf("got %q, want no secret", out)
			}
		}
	})
}

// TestVonageSignature holds the signature to Vonage's description of it, written out by
// hand: sig left out, a blank value left out, names sorted, "&name=value" with "&" and "="
// in values turned into "_", then MD5 over that and the secret, or an HMAC of it.
func TestVonageSignature(t *testing.T) {
	params := map[string]string{"status": "delivered", "err-code": "0", "b": "x=1&y", "blank": " ", "sig": "whatever", "a": "2"}
	const signed, secret = "&a=2&b=x_1_y&err-code=0&status=delivered", "s3cret"
	md := md5.Sum([]byte(signed + secret))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signed))
	for method, want := range map[string]string{
		sms.VonageMD5Hash:    hex.EncodeToString(md[:]),
		sms.VonageSHA256HMAC: hex.EncodeToString(mac.Sum(nil)),
		"sha384":             "",
	} {
		if got := sms.VonageSignature(secret, method, params); got != want {
			t.Errorf("%s: got %q, want %q", method, got, want)
		}
	}
	for _, method := range sms.VonageSignatureMethods() {
		a, b := sms.VonageSignature(secret, method, params), sms.VonageSignature("other", method, params)
		if a == "" || a == b {
			t.Errorf("%s: got %q with the secret and %q with another, want two signatures", method, a, b)
		}
	}
}
