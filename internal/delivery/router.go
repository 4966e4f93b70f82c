// Package delivery routes each message to an ordered chain of named provider instances,
// per channel and country, moving to the next provider when one definitely failed, and
// skipping a provider whose circuit breaker is open. Its Router is an otp.Deliverer: it
// reports every provider attempt.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"otpgate/internal/otp"
)

// Provider is one named provider instance.
type Provider struct {
	// Name is the instance's name, unique in a Router.
	Name string
	// Channels are the channels it carries.
	Channels []string
	Sender   otp.Sender
}

// Observer is told about every attempt and every breaker change, for metrics.
type Observer interface {
	// Attempt is called once per provider attempt, skipped ones included.
	Attempt(channel string, a otp.ProviderAttempt)
	// BreakerChanged is called when a provider's breaker changes state.
	BreakerChanged(provider string, state BreakerState)
}

// Config configures a Router.
type Config struct {
	// Providers are the instances, in the order a channel without routes tries them.
	Providers []Provider
	// Routes holds a route table per channel; a channel without one tries every provider
	// that carries it.
	Routes map[string]Routes
	// FailoverOnUnknown moves on after an unknown outcome (a timeout, a 5xx) too. The
	// first provider may have delivered the message, so the user can get two.
	FailoverOnUnknown bool
	// Breaker configures every provider's circuit breaker.
	Breaker BreakerConfig
	// AttemptTimeout bounds one provider call; 0 leaves only the caller's deadline.
	AttemptTimeout time.Duration
	// Now is the clock of breakers and attempts; nil means time.Now.
	Now func() time.Time
	// Observer, if set, is told about attempts and breaker changes.
	Observer Observer
	// Tracer makes a span of every provider attempt (docs/traces.md); nil traces nothing.
	Tracer trace.TracerProvider
}

// Router sends each message through its chain of providers.
type Router struct {
	cfg       Config
	tracer    trace.Tracer
	providers map[string]*provider
	chains    map[string]Routes // per channel, defaults filled in
}

type provider struct {
	Provider
	breaker *breaker
}

// New checks cfg (every routed name is a provider that carries the channel) and returns a Router.
func New(cfg Config) (*Router, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	tp := cfg.Tracer
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	if cfg.Breaker.Failures < 0 || cfg.Breaker.Cooldown < 0 {
		return nil, errors.New("delivery: breaker failures and cool-down must not be negative")
	}
	r := &Router{cfg: cfg, providers: map[string]*provider{}, chains: map[string]Routes{}}
	for _, p := range cfg.Providers {
		if p.Name == "" || p.Sender == nil {
			return nil, fmt.Errorf("delivery: provider %q: needs a name and a sender", p.Name)
		}
		if _, dup := r.providers[p.Name]; dup {
			return nil, fmt.Errorf("delivery: provider %q given twice", p.Name)
		}
		r.providers[p.Name] = &provider{Provider: p, breaker: newBreaker(cfg.Breaker, cfg.Now)}
	}
	// The scope's name is internal/tracing's, which this package may not import: it
	// brings net/http, which the router must not know.
	r.tracer = tp.Tracer("otpgate")
	channels := otp.Channels()
	for ch := range cfg.Routes {
		if !slices.Contains(channels, ch) {
			return nil, fmt.Errorf("delivery: routes for unknown channel %q", ch)
		}
	}
	for _, ch := range channels {
		routes, ok := cfg.Routes[ch]
		if !ok {
			var names []string
			for _, p := range cfg.Providers {
				if slices.Contains(p.Channels, ch) {
					names = append(names, p.Name)
				}
			}
			if len(names) > 0 {
				r.chains[ch] = Routes{{Providers: names}}
			}
			continue
		}
		for _, route := range routes {
			for _, name := range route.Providers {
				p, ok := r.providers[name]
				if !ok {
					return nil, fmt.Errorf("delivery: %s routes %s: no provider named %q", ch, routes, name)
				}
				if !slices.Contains(p.Channels, ch) {
					return nil, fmt.Errorf("delivery: %s routes %s: provider %q does not carry %s (it carries %s)",
						ch, routes, name, ch, strings.Join(p.Channels, ", "))
				}
			}
		}
		r.chains[ch] = routes
	}
	return r, nil
}

// Name is the provider's name when there is only one, else "router"; history records
// the provider of each attempt.
func (r *Router) Name() string {
	if len(r.cfg.Providers) == 1 {
		return r.cfg.Providers[0].Name
	}
	return "router"
}

// Channels lists the channels that have at least one provider.
func (r *Router) Channels() []string {
	var out []string
	for _, ch := range otp.Channels() {
		if _, ok := r.chains[ch]; ok {
			out = append(out, ch)
		}
	}
	return out
}

// Chain returns the provider names a message on the channel to the country goes through.
func (r *Router) Chain(channel, country string) ([]string, error) {
	routes, ok := r.chains[channel]
	if !ok {
		return nil, fmt.Errorf("no provider carries %s", channel)
	}
	chain, ok := routes.chain(country)
	if !ok {
		return nil, fmt.Errorf("no %s route for country %q", channel, country)
	}
	return slices.Clone(chain), nil
}

// BreakerStates reports each provider's breaker, by name.
func (r *Router) BreakerStates() map[string]BreakerState {
	out := make(map[string]BreakerState, len(r.providers))
	for name, p := range r.providers {
		out[name] = p.breaker.State()
	}
	return out
}

// Send implements otp.Sender through Deliver.
func (r *Router) Send(ctx context.Context, m otp.Message) (string, error) {
	d, err := r.Deliver(ctx, m)
	return d.ProviderID, err
}

// Deliver implements otp.Deliverer. It tries the chain in order: a definite failure
// moves on to the next provider with the same message; an unknown outcome stops unless
// FailoverOnUnknown; a provider whose breaker is open is skipped. When no provider of
// the chain is available, all are tried regardless, since failing without trying would
// turn a partial outage into a full one.
func (r *Router) Deliver(ctx context.Context, m otp.Message) (otp.Delivery, error) {
	var d otp.Delivery
	ch := otp.ChannelOf(m)
	names, err := r.Chain(ch, m.Country)
	if err != nil {
		return d, fmt.Errorf("delivery: %w: %w", otp.ErrNotDelivered, err)
	}
	chain := make([]*provider, len(names))
	force := true
	for i, n := range names {
		chain[i] = r.providers[n]
		if chain[i].breaker.available() {
			force = false
		}
	}
	var errs []error
	unknown := false
	for _, p := range chain {
		if ctx.Err() != nil {
			break
		}
		t := p.breaker.acquire(force)
		if t == ticketNone {
			r.record(&d, ch, otp.ProviderAttempt{Provider: p.Name, Outcome: otp.ProviderSkipped, Error: "circuit breaker open", Start: r.cfg.Now().UTC()})
			continue
		}
		a, err := r.attempt(ctx, p, t, m)
		r.record(&d, ch, a)
		d.Provider = p.Name
		if err == nil {
			d.ProviderID = a.ProviderID
			return d, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, otp.ErrNotDelivered) {
			unknown = true
			if !r.cfg.FailoverOnUnknown {
				break
			}
		}
	}
	return d, chainError(d.Attempts, errs, unknown, ctx.Err())
}

// attempt makes one provider call and reports its outcome to the breaker.
func (r *Router) attempt(ctx context.Context, p *provider, t ticket, m otp.Message) (otp.ProviderAttempt, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if r.cfg.AttemptTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, r.cfg.AttemptTimeout)
	}
	actx, span := r.tracer.Start(actx, "delivery.attempt", trace.WithAttributes(
		attribute.String("otpgate.provider", p.Name), attribute.String("otpgate.channel", otp.ChannelOf(m))))
	start := r.cfg.Now()
	id, err := p.Sender.Send(actx, m)
	cancel()
	outcome := otp.ProviderOutcomeOf(err)
	if span.IsRecording() {
		// The outcome, not the error's text, which may quote the provider's reply.
		span.SetAttributes(attribute.String("otpgate.delivery.outcome", string(outcome)))
		if err != nil {
			span.SetStatus(codes.Error, string(outcome))
		}
	}
	span.End()
	a := otp.ProviderAttempt{
		Provider: p.Name, Outcome: outcome, ProviderID: id,
		Start: start.UTC(), Duration: r.cfg.Now().Sub(start),
	}
	if err != nil {
		a.Error = err.Error()
	}
	if state, changed := p.breaker.done(t, err == nil); changed && r.cfg.Observer != nil {
		r.cfg.Observer.BreakerChanged(p.Name, state)
	}
	return a, err
}

func (r *Router) record(d *otp.Delivery, channel string, a otp.ProviderAttempt) {
	d.Attempts = append(d.Attempts, a)
	if r.cfg.Observer != nil {
		r.cfg.Observer.Attempt(channel, a)
	}
}

// chainError is the error of a chain that delivered nothing for sure. One failed
// attempt is returned as it is; otherwise the error lists every attempt and wraps
// otp.ErrNotDelivered only when no attempt may have delivered the message.
func chainError(attempts []otp.ProviderAttempt, errs []error, unknown bool, ctxErr error) error {
	if len(errs) == 1 && len(attempts) == 1 {
		return errs[0]
	}
	parts := make([]string, 0, len(attempts))
	for _, a := range attempts {
		parts = append(parts, a.Provider+": "+a.Error)
	}
	summary := strings.Join(parts, "; ")
	switch {
	case unknown:
		var last error
		for _, e := range errs {
			if !errors.Is(e, otp.ErrNotDelivered) {
				last = e
			}
		}
		return &Error{summary: summary, err: last}
	case len(errs) == 0 && ctxErr != nil:
		return &Error{summary: "no provider tried before the deadline", err: errors.Join(otp.ErrNotDelivered, ctxErr)}
	case len(errs) == 0:
		return &Error{summary: "no provider available: " + summary, err: otp.ErrNotDelivered}
	}
	return &Error{summary: summary, err: errors.Join(otp.ErrNotDelivered, errs[len(errs)-1])}
}

// Error is the failure of a chain of several attempts.
type Error struct {
	summary string
	err     error
}

func (e *Error) Error() string { return "delivery: " + e.summary }

// Unwrap gives errors.Is the outcome: otp.ErrNotDelivered only when nothing may have gone out.
func (e *Error) Unwrap() error { return e.err }
