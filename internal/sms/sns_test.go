package sms_test

import (
	"context"
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

// The access key of the SigV4 test suite's examples.
const (
	snsKeyID  = "AKIDEXAMPLE"
	snsSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

func newSNS(t *testing.T, endpoint string, edit func(*sms.SNSConfig)) *sms.SNS {
	t.Helper()
	cfg := sms.SNSConfig{Region: "ap-northeast-1", AccessKeyID: snsKeyID, SecretAccessKey: snsSecret, Endpoint: endpoint}
	if edit != nil {
		edit(&cfg)
	}
	s, err := sms.NewSNS(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewSNS: %v", err)
	}
	return s
}

func TestSNSSend(t *testing.T) {
	ctx := context.Background()

	t.Run("PublishesASignedTransactionalSMS", func(t *testing.T) {
		f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
		s := newSNS(t, f.URL, func(c *sms.SNSConfig) { c.SenderID, c.OriginationNumber = "OTPGATE", "+15005550006" })
		id, err := s.Send(ctx, message())
		got := f.Received()
		if err != nil || len(got) != 1 || id != got[0].MessageID {
			t.Fatalf("Send: got %q, %v and %d messages, want the MessageId of one", id, err, len(got))
		}
		want := smstest.SNSRequest{MessageID: id, PhoneNumber: "+819012345678", Message: message().Body,
			Attributes:  map[string]string{"AWS.SNS.SMS.SMSType": "Transactional", "AWS.SNS.SMS.SenderID": "OTPGATE", "AWS.MM.SMS.OriginationNumber": "+15005550006"},
			AccessKeyID: snsKeyID, Region: "ap-northeast-1", Code: code}
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("got %+v, want %+v", got[0], want)
		}
	})

	t.Run("SendsTheSessionTokenAndNoOptionalAttributes", func(t *testing.T) {
		f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
		if _, err := newSNS(t, f.URL, func(c *sms.SNSConfig) { c.SessionToken = "session-token" }).Send(ctx, message()); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if r := f.Received()[0]; r.SessionToken != "session-token" || !reflect.DeepEqual(r.Attributes, map[string]string{"AWS.SNS.SMS.SMSType": "Transactional"}) {
			t.Errorf("got %+v, want the session token and the SMS type alone", r)
		}
	})

	t.Run("RefusalsAreDefinite", func(t *testing.T) {
		for _, c := range []struct {
			name, secret, to string
			status           int
			want             string
		}{
			{"WrongSecret", "not-the-secret", "+819012345678", 403, "SignatureDoesNotMatch"},
			{"InvalidNumber", snsSecret, "+81901", 400, "InvalidParameter: Invalid parameter: PhoneNumber"},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
				m := message()
				m.To = c.to
				_, err := newSNS(t, f.URL, func(cfg *sms.SNSConfig) { cfg.SecretAccessKey = c.secret }).Send(ctx, m)
				if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprintf("status %d: %s", c.status, c.want)) {
					t.Errorf("got %v, want a definite failure with %d and %q", err, c.status, c.want)
				}
				if len(f.Received()) != 0 || len(f.Refused()) != 1 || strings.Contains(fmt.Sprint(err), snsSecret) {
					t.Errorf("got %d kept and refusals %v (%v), want none kept, one refusal, no secret", len(f.Received()), f.Refused(), err)
				}
			})
		}
	})

	t.Run("UnknownKeyIsDefinite", func(t *testing.T) {
		f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
		_, err := newSNS(t, f.URL, func(c *sms.SNSConfig) { c.AccessKeyID = "AKIDOTHER" }).Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "InvalidClientTokenId") {
			t.Errorf("got %v, want a definite InvalidClientTokenId", err)
		}
	})

	t.Run("ThrottledIsDefiniteAndNotRetried", func(t *testing.T) {
		f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
		f.Set(smstest.Reply{Status: http.StatusTooManyRequests})
		_, err := newSNS(t, f.URL, nil).Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "Throttled") || f.Calls() != 1 {
			t.Errorf("got %v after %d requests, want a definite Throttled after one", err, f.Calls())
		}
	})

	t.Run("ServerErrorIsUnknownAndNotRetried", func(t *testing.T) {
		for _, status := range []int{500, 503} {
			f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
			f.Set(smstest.Reply{Status: status})
			_, err := newSNS(t, f.URL, nil).Send(ctx, message())
			if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), fmt.Sprint(status)) {
				t.Errorf("status %d: got %v, want an unknown outcome", status, err)
			}
			// The SDK's standard retryer would try three times: each request may be an SMS.
			if n := f.Calls(); n != 1 {
				t.Errorf("status %d: the fake got %d requests, want one", status, n)
			}
		}
	})

	t.Run("TimeoutIsUnknownAndNotRetried", func(t *testing.T) {
		f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
		f.Set(smstest.Reply{Hang: true})
		_, err := newSNS(t, f.URL, func(c *sms.SNSConfig) { c.Timeout = time.Hour }).Send(shortCtx(t), message())
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want the ctx deadline and not ErrNotDelivered", err)
		}
		if n := f.Calls(); n != 1 {
			t.Errorf("the fake got %d requests, want the one that may still go out, and no second", n)
		}
	})

	t.Run("ABrokenConnectionIsUnknownAndNotRetried", func(t *testing.T) {
		f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
		f.Set(smstest.Reply{Hang: true})
		_, err := newSNS(t, f.URL, func(c *sms.SNSConfig) { c.Timeout = 200 * time.Millisecond }).Send(ctx, message())
		if err == nil || errors.Is(err, otp.ErrNotDelivered) || f.Calls() != 1 {
			t.Errorf("got %v and %d requests, want an unknown outcome after one request", err, f.Calls())
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		_, err := newSNS(t, refusedURL(t), nil).Send(ctx, message())
		if !errors.Is(err, otp.ErrNotDelivered) || strings.Contains(err.Error(), snsSecret) {
			t.Errorf("got %v, want an error wrapping ErrNotDelivered without the secret", err)
		}
	})

	t.Run("OtherChannelsAreDefiniteAndSendNothing", func(t *testing.T) {
		f := smstest.NewSNS(t, "ap-northeast-1", snsKeyID, snsSecret)
		m := message()
		m.Channel = otp.ChannelVoice
		if _, err := newSNS(t, f.URL, nil).Send(ctx, m); !errors.Is(err, otp.ErrNotDelivered) || len(f.Received()) != 0 {
			t.Errorf("got %v, want ErrNotDelivered and no request", err)
		}
	})

	t.Run("ErrorsNeverQuoteTheCode", func(t *testing.T) {
		srv, _ := provider(t, http.StatusBadRequest, "text/xml", `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameter</Code>`+
			`<Message>Message 'Your code is 483920. It expires in 5 minutes.' refused</Message></Error><RequestId>r</RequestId></ErrorResponse>`)
		if _, err := newSNS(t, srv.URL, nil).Send(ctx, message()); err == nil || strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), "InvalidParameter") {
			t.Errorf("got %v, want InvalidParameter without the OTP", err)
		}
	})
}

func TestNewSNS(t *testing.T) {
	t.Run("TakesTheRegionAndKeysFromTheAWSChain", func(t *testing.T) {
		t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
		t.Setenv("AWS_REGION", "eu-west-1")
		t.Setenv("AWS_ACCESS_KEY_ID", snsKeyID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", snsSecret)
		f := smstest.NewSNS(t, "eu-west-1", snsKeyID, snsSecret)
		s, err := sms.NewSNS(context.Background(), sms.SNSConfig{Endpoint: f.URL})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(context.Background(), message()); err != nil || len(f.Received()) != 1 || f.Received()[0].Region != "eu-west-1" {
			t.Errorf("got %v, %+v, want one message signed for eu-west-1", err, f.Received())
		}
	})
	t.Run("RejectsNoRegion", func(t *testing.T) {
		t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
		t.Setenv("AWS_REGION", "")
		t.Setenv("AWS_DEFAULT_REGION", "")
		t.Setenv("AWS_PROFILE", "")
		if _, err := sms.NewSNS(context.Background(), sms.SNSConfig{AccessKeyID: snsKeyID, SecretAccessKey: snsSecret}); err == nil || !strings.Contains(err.Error(), "no region") {
			t.Errorf("got %v, want an error about the region", err)
		}
	})
	for name, edit := range map[string]func(*sms.SNSConfig){
		"AKeyIDWithoutASecret": func(c *sms.SNSConfig) { c.SecretAccessKey = "" },
		"ASecretWithoutAKeyID": func(c *sms.SNSConfig) { c.AccessKeyID = "" },
		"ARelativeEndpoint":    func(c *sms.SNSConfig) { c.Endpoint = "sns.example.com" },
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			cfg := sms.SNSConfig{Region: "us-east-1", AccessKeyID: snsKeyID, SecretAccessKey: snsSecret}
			edit(&cfg)
			if s, err := sms.NewSNS(context.Background(), cfg); err == nil {
				t.Errorf("got %v, nil, want an error", s)
			}
		})
	}
	t.Run("ConfigHidesTheSecret", func(t *testing.T) {
		cfg := sms.SNSConfig{Region: "us-east-1", AccessKeyID: snsKeyID, SecretAccessKey: snsSecret, SessionToken: "session-token"}
		for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg)} {
			if strings.Contains(out, snsSecret) || strings.Contains(out, "session-token") {
				t.Errorf("got %q, want neither the secret nor the token", out)
			}
		}
	})
}
