package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
)

// fake is a provider that answers each call with the next of its replies (the last
// one repeats) and counts what it got.
type fake struct {
	name string
	mu   sync.Mutex
	errs []error
	got  []otp.Message
}

var (
	errRefused = fmt.Errorf("status 400: %w", otp.ErrNotDelivered)
	errTimeout = fmt.Errorf("post (delivery unknown): %w", context.DeadlineExceeded)
)

func (f *fake) Name() string { return f.name }

func (f *fake) Send(ctx context.Context, m otp.Message) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if len(f.errs) > 0 {
		err = f.errs[0]
		if len(f.errs) > 1 {
			f.errs = f.errs[1:]
		}
	}
	f.got = append(f.got, m)
	if err != nil {
		return "", err
	}
	return "id-" + f.name, nil
}

func (f *fake) set(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = errs
}

func (f *fake) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// observer keeps what the router reported.
type observer struct {
	mu       sync.Mutex
	attempts []string
	changes  []string
}

func (o *observer) Attempt(ch string, a otp.ProviderAttempt) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts = append(o.attempts, ch+"/"+a.Provider+"/"+string(a.Outcome))
}

func (o *observer) BreakerChanged(p string, s delivery.BreakerState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.changes = append(o.changes, p+"="+string(s))
}

func sms(country string) otp.Message {
	return otp.Message{ID: "s1", Channel: otp.ChannelSMS, To: "+819012345678", Country: country, Body: "code 483920", Code: "483920"}
}

func newRouter(t *testing.T, cfg delivery.Config) *delivery.Router {
	t.Helper()
	r, err := delivery.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func phone(f *fake) delivery.Provider {
	return delivery.Provider{Name: f.name, Channels: []string{otp.ChannelSMS, otp.ChannelVoice}, Sender: f}
}

func outcomes(d otp.Delivery) string {
	var s []string
	for _, a := range d.Attempts {
		s = append(s, a.Provider+":"+string(a.Outcome))
	}
	return strings.Join(s, ",")
}

func TestFailover(t *testing.T) {
	t.Run("DefiniteFailureMovesToTheNextProviderWithTheSameMessage", func(t *testing.T) {
		a, b := &fake{name: "a", errs: []error{errRefused}}, &fake{name: "b"}
		obs := &observer{}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}, Observer: obs})
		d, err := r.Deliver(context.Background(), sms("JP"))
		if err != nil || d.Provider != "b" || d.ProviderID != "id-b" {
			t.Fatalf("got %+v, %v, want delivered by b", d, err)
		}
		if got := outcomes(d); got != "a:failed,b:sent" {
			t.Errorf("attempts: got %s, want a:failed,b:sent", got)
		}
		if d.Attempts[0].Error == "" || d.Attempts[1].Error != "" {
			t.Errorf("attempt errors: got %q and %q, want a's error only", d.Attempts[0].Error, d.Attempts[1].Error)
		}
		if a.calls() != 1 || b.calls() != 1 || b.got[0].Code != "483920" || b.got[0].Body != a.got[0].Body {
			t.Errorf("calls: got a=%d b=%d, want one each with the same message", a.calls(), b.calls())
		}
		if got := strings.Join(obs.attempts, " "); got != "sms/a/failed sms/b/sent" {
			t.Errorf("observed: got %s, want both attempts", got)
		}
	})

	t.Run("UnknownOutcomeStopsByDefault", func(t *testing.T) {
		a, b := &fake{name: "a", errs: []error{errTimeout}}, &fake{name: "b"}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}})
		d, err := r.Deliver(context.Background(), sms("JP"))
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want a's unknown error", err)
		}
		if b.calls() != 0 || outcomes(d) != "a:unknown" {
			t.Errorf("got b called %d times, attempts %s, want no failover", b.calls(), outcomes(d))
		}
	})

	t.Run("UnknownOutcomeMovesOnWhenEnabled", func(t *testing.T) {
		a, b := &fake{name: "a", errs: []error{errTimeout}}, &fake{name: "b"}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}, FailoverOnUnknown: true})
		d, err := r.Deliver(context.Background(), sms("JP"))
		if err != nil || outcomes(d) != "a:unknown,b:sent" {
			t.Errorf("got %s, %v, want a unknown then b sent", outcomes(d), err)
		}
	})

	t.Run("ChainOutcomeIsUnknownIfAnyAttemptWas", func(t *testing.T) {
		a, b := &fake{name: "a", errs: []error{errTimeout}}, &fake{name: "b", errs: []error{errRefused}}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}, FailoverOnUnknown: true})
		_, err := r.Deliver(context.Background(), sms("JP"))
		if err == nil || errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "a: ") || !strings.Contains(err.Error(), "b: ") {
			t.Errorf("got %v, want an unknown error naming both attempts", err)
		}
	})

	t.Run("AllDefiniteIsDefinite", func(t *testing.T) {
		a, b := &fake{name: "a", errs: []error{errRefused}}, &fake{name: "b", errs: []error{errRefused}}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}})
		_, err := r.Deliver(context.Background(), sms("JP"))
		if !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want ErrNotDelivered", err)
		}
	})

	t.Run("OneProviderKeepsItsOwnError", func(t *testing.T) {
		a := &fake{name: "twilio", errs: []error{errRefused}}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a)}})
		if _, err := r.Send(context.Background(), sms("JP")); err != errRefused || r.Name() != "twilio" {
			t.Errorf("got %v and name %q, want the provider's own error and name", err, r.Name())
		}
	})

	t.Run("EachAttemptHasItsOwnTimeout", func(t *testing.T) {
		slow := &slowSender{name: "a"}
		b := &fake{name: "b"}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{{Name: "a", Channels: []string{"sms"}, Sender: slow}, phone(b)},
			AttemptTimeout: 20 * time.Millisecond, FailoverOnUnknown: true})
		d, err := r.Deliver(context.Background(), sms("JP"))
		if err != nil || outcomes(d) != "a:unknown,b:sent" {
			t.Errorf("got %s, %v, want a timed out on its own deadline and b sent", outcomes(d), err)
		}
	})
}

// slowSender answers only when its context ends.
type slowSender struct{ name string }

func (s *slowSender) Name() string { return s.name }
func (s *slowSender) Send(ctx context.Context, _ otp.Message) (string, error) {
	<-ctx.Done()
	return "", fmt.Errorf("post (delivery unknown): %w", ctx.Err())
}

func TestRouting(t *testing.T) {
	web, tw, mail := &fake{name: "webhook"}, &fake{name: "twilio"}, &fake{name: "smtp"}
	providers := []delivery.Provider{
		{Name: "webhook", Channels: []string{"sms"}, Sender: web},
		{Name: "twilio", Channels: []string{"sms", "whatsapp", "voice"}, Sender: tw},
		{Name: "smtp", Channels: []string{"email"}, Sender: mail},
	}
	var routes delivery.Routes
	if err := routes.UnmarshalText([]byte("JP,KR:webhook,twilio;*:twilio")); err != nil {
		t.Fatalf("routes: %v", err)
	}
	r := newRouter(t, delivery.Config{Providers: providers, Routes: map[string]delivery.Routes{"sms": routes}})

	t.Run("ChainPerChannelAndCountry", func(t *testing.T) {
		for _, tc := range []struct{ channel, country, want string }{
			{"sms", "JP", "webhook,twilio"},
			{"sms", "KR", "webhook,twilio"},
			{"sms", "US", "twilio"},
			{"voice", "JP", "twilio"},
			{"whatsapp", "US", "twilio"},
			{"email", "", "smtp"},
		} {
			got, err := r.Chain(tc.channel, tc.country)
			if err != nil || strings.Join(got, ",") != tc.want {
				t.Errorf("%s to %s: got %v, %v, want %s", tc.channel, tc.country, got, err, tc.want)
			}
		}
		if got := strings.Join(r.Channels(), ","); got != "sms,whatsapp,voice,email" || r.Name() != "router" {
			t.Errorf("channels: got %s and name %q, want all four and router", got, r.Name())
		}
	})

	t.Run("MessageGoesToTheCountrysFirstProvider", func(t *testing.T) {
		if d, err := r.Deliver(context.Background(), sms("JP")); err != nil || d.Provider != "webhook" {
			t.Errorf("JP: got %+v, %v, want webhook", d, err)
		}
		if d, err := r.Deliver(context.Background(), sms("US")); err != nil || d.Provider != "twilio" {
			t.Errorf("US: got %+v, %v, want twilio", d, err)
		}
	})

	t.Run("NoRouteIsDefinite", func(t *testing.T) {
		var jpOnly delivery.Routes
		_ = jpOnly.UnmarshalText([]byte("JP:twilio"))
		r := newRouter(t, delivery.Config{Providers: providers[1:2], Routes: map[string]delivery.Routes{"sms": jpOnly}})
		for _, m := range []otp.Message{sms("US"), {Channel: otp.ChannelEmail, To: "a@example.com"}} {
			if _, err := r.Deliver(context.Background(), m); !errors.Is(err, otp.ErrNotDelivered) {
				t.Errorf("%s to %q: got %v, want ErrNotDelivered", m.Channel, m.Country, err)
			}
		}
	})

	t.Run("BadConfigIsRefused", func(t *testing.T) {
		routes := func(s string) delivery.Routes {
			var r delivery.Routes
			if err := r.UnmarshalText([]byte(s)); err != nil {
				t.Fatalf("routes %q: %v", s, err)
			}
			return r
		}
		for name, cfg := range map[string]delivery.Config{
			"UnknownProvider":   {Providers: providers, Routes: map[string]delivery.Routes{"sms": routes("*:nope")}},
			"WrongChannel":      {Providers: providers, Routes: map[string]delivery.Routes{"email": routes("twilio")}},
			"UnknownChannel":    {Providers: providers, Routes: map[string]delivery.Routes{"fax": routes("twilio")}},
			"DuplicateProvider": {Providers: append(providers, providers[0])},
		} {
			if _, err := delivery.New(cfg); err == nil {
				t.Errorf("%s: got nil, want an error", name)
			}
		}
	})
}
