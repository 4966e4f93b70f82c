package delivery_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
)

func TestBreaker(t *testing.T) {
	const failures, cooldown = 3, 30 * time.Second

	t.Run("OpensAfterConsecutiveFailuresAndSkipsUntilTheProbeSucceeds", func(t *testing.T) {
		clk := &clock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
		a, b := &fake{name: "a", errs: []error{errRefused}}, &fake{name: "b"}
		obs := &observer{}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}, Now: clk.Now, Observer: obs,
			Breaker: delivery.BreakerConfig{Failures: failures, Cooldown: cooldown}})
		for i := range failures {
			d, err := r.Deliver(context.Background(), sms("JP"))
			if err != nil || outcomes(d) != "a:failed,b:sent" {
				t.Fatalf("send %d: got %s, %v, want a failed and b sent", i+1, outcomes(d), err)
			}
		}
		if got := r.BreakerStates()["a"]; got != delivery.BreakerOpen {
			t.Fatalf("a's breaker after %d failures: got %s, want open", failures, got)
		}
		d, _ := r.Deliver(context.Background(), sms("JP"))
		if outcomes(d) != "a:skipped,b:sent" || a.calls() != failures {
			t.Errorf("while open: got %s with a called %d times, want a skipped", outcomes(d), a.calls())
		}
		clk.add(cooldown - time.Second)
		if d, _ := r.Deliver(context.Background(), sms("JP")); outcomes(d) != "a:skipped,b:sent" {
			t.Errorf("before the cool-down ends: got %s, want a skipped", outcomes(d))
		}

		clk.add(time.Second) // the cool-down is over; a still fails: the probe re-opens it
		if d, _ := r.Deliver(context.Background(), sms("JP")); outcomes(d) != "a:failed,b:sent" {
			t.Errorf("failed probe: got %s, want a probed and b sent", outcomes(d))
		}
		if d, _ := r.Deliver(context.Background(), sms("JP")); outcomes(d) != "a:skipped,b:sent" {
			t.Errorf("after the failed probe: got %s, want a skipped again", outcomes(d))
		}

		a.set(nil) // a recovers; the next probe closes the breaker
		clk.add(cooldown)
		if d, _ := r.Deliver(context.Background(), sms("JP")); outcomes(d) != "a:sent" {
			t.Errorf("successful probe: got %s, want a sent", outcomes(d))
		}
		if got := r.BreakerStates()["a"]; got != delivery.BreakerClosed {
			t.Errorf("after the probe: got %s, want closed", got)
		}
		if got := strings.Join(obs.changes, " "); got != "a=open a=open a=closed" {
			t.Errorf("breaker changes: got %q, want open, open again after the failed probe, closed", got)
		}
	})

	t.Run("SuccessResetsTheCount", func(t *testing.T) {
		a, b := &fake{name: "a"}, &fake{name: "b"}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}, Breaker: delivery.BreakerConfig{Failures: 2, Cooldown: time.Hour}})
		for _, err := range []error{errRefused, nil, errRefused, nil} {
			a.set(err)
			if _, err := r.Deliver(context.Background(), sms("JP")); err != nil {
				t.Fatalf("Deliver: %v", err)
			}
		}
		if got := r.BreakerStates()["a"]; got != delivery.BreakerClosed {
			t.Errorf("got %s, want closed: the failures were not consecutive", got)
		}
	})

	t.Run("OnlyOneProbeAtATime", func(t *testing.T) {
		clk := &clock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
		gate := &gatedSender{name: "a", release: make(chan struct{}), started: make(chan struct{}, 4)}
		b := &fake{name: "b"}
		r := newRouter(t, delivery.Config{
			Providers: []delivery.Provider{{Name: "a", Channels: []string{"sms"}, Sender: gate}, phone(b)},
			Now:       clk.Now, Breaker: delivery.BreakerConfig{Failures: 1, Cooldown: time.Minute},
		})
		gate.fail = true
		_, _ = r.Deliver(context.Background(), sms("JP")) // opens a
		gate.fail = false
		clk.add(time.Minute)
		done := make(chan otp.Delivery)
		go func() { d, _ := r.Deliver(context.Background(), sms("JP")); done <- d }()
		<-gate.started // the probe is in flight
		if d, _ := r.Deliver(context.Background(), sms("JP")); outcomes(d) != "a:skipped,b:sent" {
			t.Errorf("during the probe: got %s, want a skipped", outcomes(d))
		}
		close(gate.release)
		if d := <-done; outcomes(d) != "a:sent" {
			t.Errorf("probe: got %s, want a sent", outcomes(d))
		}
	})

	t.Run("WhenEveryBreakerIsOpenTheChainIsTriedAnyway", func(t *testing.T) {
		a := &fake{name: "a", errs: []error{errRefused}}
		r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a)}, Breaker: delivery.BreakerConfig{Failures: 1, Cooldown: time.Hour}})
		_, _ = r.Deliver(context.Background(), sms("JP"))
		a.set(nil)
		if d, err := r.Deliver(context.Background(), sms("JP")); err != nil || outcomes(d) != "a:sent" {
			t.Errorf("got %s, %v, want a tried although open", outcomes(d), err)
		}
		if got := r.BreakerStates()["a"]; got != delivery.BreakerClosed {
			t.Errorf("got %s, want closed after it delivered", got)
		}
	})
}

// gatedSender blocks each call until release is closed, then fails if told to.
type gatedSender struct {
	name    string
	fail    bool
	release chan struct{}
	started chan struct{}
}

func (g *gatedSender) Name() string { return g.name }
func (g *gatedSender) Send(ctx context.Context, _ otp.Message) (string, error) {
	if g.fail {
		return "", errRefused
	}
	g.started <- struct{}{}
	<-g.release
	return "id", nil
}
