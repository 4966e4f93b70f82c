package otp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// fakeDeliverer is a router: it reports the attempts it is told to, and their outcome.
type fakeDeliverer struct {
	fakeSender
	attempts []otp.ProviderAttempt
	err      error
}

func (d *fakeDeliverer) Deliver(ctx context.Context, m otp.Message) (otp.Delivery, error) {
	if _, err := d.fakeSender.Send(ctx, m); err != nil {
		return otp.Delivery{}, err
	}
	last := d.attempts[len(d.attempts)-1]
	return otp.Delivery{Provider: last.Provider, ProviderID: last.ProviderID, Attempts: d.attempts}, d.err
}

func TestSendRecordsEveryProviderAttempt(t *testing.T) {
	failed := otp.ProviderAttempt{Provider: "first", Outcome: otp.ProviderFailed, Error: "first: status 400", Start: time.Unix(10, 0).UTC()}
	for _, tc := range []struct {
		name     string
		attempts []otp.ProviderAttempt
		err      error
		status   otp.SendStatus
		refunded bool
	}{
		{"FailoverDelivered", []otp.ProviderAttempt{failed, {Provider: "second", Outcome: otp.ProviderSent, ProviderID: "SM2"}}, nil, otp.SendSent, false},
		{"EveryProviderRefused", []otp.ProviderAttempt{failed, {Provider: "second", Outcome: otp.ProviderFailed, Error: "second: status 422"}},
			fmt.Errorf("delivery: %w", otp.ErrNotDelivered), otp.SendFailed, true},
		{"SecondTimedOut", []otp.ProviderAttempt{failed, {Provider: "second", Outcome: otp.ProviderUnknown, Error: "second: timeout"}},
			errors.New("delivery: second: timeout"), otp.SendFailed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			d := &fakeDeliverer{attempts: tc.attempts, err: tc.err}
			svc := otp.NewService(otp.Config{Secret: []byte("s"), CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 3,
				SMSTimeout: time.Second}, e.store, e.limiter, d, mustRenderer(t), e.denied, slog.New(slog.DiscardHandler))
			svc.Now, svc.Rand = e.clock.Now, codeReader(codes...)
			res, err := svc.Send(context.Background(), otp.SendInput{Phone: testPhone, Locale: "en", ClientIP: testIP})
			if (err == nil) != (tc.status == otp.SendSent) {
				t.Fatalf("got %v, want an error only when nothing was sent", err)
			}
			var provider *otp.ErrProvider
			if err != nil && (!errors.As(err, &provider) || provider.Provider != "second" || provider.Definite != tc.refunded) {
				t.Errorf("got %v, want a provider error of second, definite %v", err, tc.refunded)
			}
			rows, _, _ := e.store.ListSends(context.Background(), history.SendFilter{})
			if len(rows) != 1 {
				t.Fatalf("got %d rows, want 1", len(rows))
			}
			r := rows[0]
			if r.SendStatus != tc.status || r.Provider != "second" || !reflect.DeepEqual(r.Attempts, tc.attempts) ||
				r.Channel != otp.ChannelSMS || r.Country != "JP" || r.Encoding != otp.EncodingGSM7 || r.Segments != 1 {
				t.Errorf("got %+v, want %s by second with both attempts, an SMS to JP of one GSM-7 segment", r, tc.status)
			}
			if got := len(e.limiter.Refunds()) == 1; got != tc.refunded {
				t.Errorf("refunded: got %v, want %v", got, tc.refunded)
			}
			if tc.status == otp.SendSent && res.Verification.Status != otp.StatusPending {
				t.Errorf("got %+v, want a pending verification", res.Verification)
			}
		})
	}
}

func TestSendByEmail(t *testing.T) {
	e := newEnv(t, func(c *otp.Config) {
		c.EmailRules = []rate.Rule{{Limit: 2, Window: time.Hour}}
		c.CheckEmailRules = []rate.Rule{{Limit: 7, Window: time.Hour}}
	})
	res, err := e.svc.Send(context.Background(), otp.SendInput{Email: " Ana@Example.COM ", Locale: "fr", ClientIP: testIP})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Verification; v.Address != "Ana@example.com" || v.Channel != otp.ChannelEmail {
		t.Errorf("got %+v, want an email verification of Ana@example.com", v)
	}
	msgs := e.sender.Messages()
	if len(msgs) != 1 || msgs[0].Channel != otp.ChannelEmail || msgs[0].To != "Ana@example.com" || msgs[0].Country != "" ||
		!strings.Contains(msgs[0].Subject, "vérification") || !strings.Contains(msgs[0].HTML, codes[0]) || msgs[0].Encoding != "" {
		t.Errorf("got %+v, want one French email with the code", msgs)
	}
	scopes := func(ls []rate.Limit) (out []string) {
		for _, l := range ls {
			out = append(out, l.Scope+"="+l.Key+"="+rate.Rules(l.Rules).String())
		}
		return out
	}
	allow := e.limiter.Allows()[0]
	if got := strings.Join(scopes(allow), " "); !strings.Contains(got, "email=Ana@example.com=2/1h") || strings.Contains(got, "phone=") {
		t.Errorf("limits: got %s, want the email rules on the address and no phone rule", got)
	}

	_, err = e.svc.Check(context.Background(), otp.CheckInput{Email: "Ana@EXAMPLE.com", Code: codes[0], ClientIP: testIP})
	if err != nil {
		t.Errorf("check by email: %v", err)
	}
	if got := strings.Join(scopes(e.limiter.Allows()[1]), " "); !strings.Contains(got, "check_email=Ana@example.com=7/1h") {
		t.Errorf("check limits: got %s, want check_email on the address", got)
	}

	for _, bad := range []string{"ana", "ana@", "@example.com", "ana@example", "a b@example.com", `"a"@example.com`, "アナ@example.com", "ana@exa_mple.com"} {
		_, err := e.svc.Send(context.Background(), otp.SendInput{Email: bad, ClientIP: testIP})
		var inv *contact.ErrInvalidEmail
		if !errors.As(err, &inv) || otp.ErrorCode(err) != otp.CodeInvalidEmail {
			t.Errorf("%q: got %v, want invalid_email", bad, err)
		}
	}
	if n := len(e.limiter.Allows()); n != 2 {
		t.Errorf("the limiter was asked %d times, want 2: invalid addresses spend nothing", n)
	}
}

func TestChannelsCannotBeChangedByACaller(t *testing.T) {
	want := []string{otp.ChannelSMS, otp.ChannelWhatsApp, otp.ChannelVoice, otp.ChannelEmail}
	got := otp.Channels()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	got[0] = "pigeon"
	if again := otp.Channels(); !reflect.DeepEqual(again, want) {
		t.Errorf("after a caller changed its copy: got %v, want %v", again, want)
	}
	if (otp.App{}).AcceptsChannel("pigeon") {
		t.Errorf("AcceptsChannel(%q): got true, want false", "pigeon")
	}
}
