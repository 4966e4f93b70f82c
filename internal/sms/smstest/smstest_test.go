package smstest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

const secret = "smstest-secret"

// deliver sends one message to p the way otpgate does, signed with key.
func deliver(ctx context.Context, t *testing.T, p *smstest.Provider, key, to, body string) error {
	t.Helper()
	w, err := sms.NewWebhook(sms.WebhookConfig{URL: p.URL, Secret: key, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Send(ctx, otp.Message{ID: "m-" + to, To: to, Body: body, Locale: "en"})
	return err
}

func TestProvider(t *testing.T) {
	ctx := context.Background()

	t.Run("KeepsAcceptedDeliveriesWithTheirCode", func(t *testing.T) {
		p := smstest.New(t, secret)
		for _, body := range []string{"Your code is 123456", "Your code is 654321"} {
			if err := deliver(ctx, t, p, secret, "+819011112222", body); err != nil {
				t.Fatalf("got %v, want delivered", err)
			}
		}
		got := p.Received("+819011112222")
		if len(got) != 2 || got[0].Code != "123456" || got[1].Body != "Your code is 654321" {
			t.Errorf("got %+v, want both messages with their codes", got)
		}
		if c := p.LastCode("+819011112222"); c != "654321" {
			t.Errorf("got last code %q, want 654321", c)
		}
		if n := p.PerPhone()["+819011112222"]; n != 2 {
			t.Errorf("got %d per phone, want 2", n)
		}
	})

	t.Run("WrongSignatureIsRefusedAndCounted", func(t *testing.T) {
		p, err := smstest.Start(smstest.Config{Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := deliver(ctx, t, p, "other-secret", "+819011113333", "code 111111"); err == nil {
			t.Errorf("got delivered with a wrong secret, want refused")
		}
		if n, err := p.Bad(); n != 1 || err == nil {
			t.Errorf("got %d bad (%v), want 1 with its reason", n, err)
		}
		if got := p.Received(""); len(got) != 0 {
			t.Errorf("got %d kept, want 0", len(got))
		}
	})

	t.Run("NewFailsTheTestOnABadDelivery", func(t *testing.T) {
		tb := &recorder{}
		p := smstest.New(tb, secret)
		_ = deliver(ctx, t, p, "other-secret", "+819011114444", "code 111111")
		tb.cleanup()
		if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], "1 bad deliveries") {
			t.Errorf("got errors %q, want one about 1 bad delivery", tb.errors)
		}
	})

	t.Run("SkipSignaturesAcceptsAnySignature", func(t *testing.T) {
		p, err := smstest.Start(smstest.Config{Secret: secret, SkipSignatures: true})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := deliver(ctx, t, p, "other-secret", "+819011115555", "code 222222"); err != nil {
			t.Errorf("got %v, want delivered", err)
		}
		if c := p.LastCode("+819011115555"); c != "222222" {
			t.Errorf("got code %q, want 222222", c)
		}
	})

	t.Run("RefusingStatusKeepsNothing", func(t *testing.T) {
		p := smstest.New(t, secret)
		p.Set(smstest.Reply{Status: http.StatusBadRequest})
		if err := deliver(ctx, t, p, secret, "+819011116666", "code 333333"); err == nil {
			t.Errorf("got delivered, want the 400 as an error")
		}
		if got := p.Received(""); len(got) != 0 {
			t.Errorf("got %d kept, want 0", len(got))
		}
	})

	t.Run("HangKeepsTheDeliveryInFlightUntilTheSenderGivesUp", func(t *testing.T) {
		p := smstest.New(t, secret)
		p.Set(smstest.Reply{Hang: true})
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- deliver(short, t, p, secret, "+819011117777", "code 444444") }()
		deadline := time.Now().Add(5 * time.Second)
		for p.InFlight() != 1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := p.InFlight(); n != 1 {
			t.Fatalf("got %d in flight, want 1", n)
		}
		if err := <-done; err == nil {
			t.Errorf("got delivered, want a timeout")
		}
		for p.InFlight() != 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := p.InFlight(); n != 0 {
			t.Errorf("got %d in flight after the sender gave up, want 0", n)
		}
		if got := len(p.Received("+819011117777")); got != 1 {
			t.Errorf("got %d kept, want the hanging delivery", got)
		}
	})
}

// recorder is a TB that keeps what the provider reports instead of failing this test.
type recorder struct {
	cleanups []func()
	errors   []string
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (r *recorder) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
