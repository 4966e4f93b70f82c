package events

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/outbound"
	"otpgate/internal/tracing"
)

// Options tune the Dispatcher; zero values take the defaults.
type Options struct {
	// RetryFor is how long an event is retried before it is parked (OTP_EVENTS_RETRY_FOR).
	RetryFor time.Duration
	// Backoff is the first retry's delay, doubled at each further one up to MaxBackoff;
	// each delay is drawn between half of it and all of it (jitter).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Timeout bounds one POST; a claim's lease is twice it and a second more.
	Timeout time.Duration
	// Poll is the pause after a round that found nothing due.
	Poll time.Duration
	// Batch is how many events one round claims and posts at once.
	Batch int
	// Outbound is the address policy of the endpoints: their URLs are checked against it
	// when they are added, and the default client connects only where it allows. The
	// zero value refuses loopback, private, link-local and other special addresses.
	Outbound outbound.Policy
	// Client posts the events; its Timeout is not used (Timeout is). Nil: Outbound's
	// client, which follows no redirects.
	Client *http.Client
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Tracer makes a span of every delivery and sends its traceparent to the receiver
	// (docs/traces.md); nil traces nothing.
	Tracer trace.TracerProvider
	// Origins, when set, names the trace each verification began in, which the
	// deliveries of its events join; without it (or for a verification it does not know)
	// a delivery starts a trace of its own.
	Origins interface {
		Origin(verificationID string) (trace.SpanContext, bool)
	}
}

// Defaults of Options.
const (
	DefaultRetryFor   = 24 * time.Hour
	DefaultBackoff    = 10 * time.Second
	DefaultMaxBackoff = time.Hour
	DefaultTimeout    = 10 * time.Second
	DefaultPoll       = time.Second
	DefaultBatch      = 32
)

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.RetryFor, DefaultRetryFor)
	def(&o.Backoff, DefaultBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.Timeout, DefaultTimeout)
	def(&o.Poll, DefaultPoll)
	o.MaxBackoff = max(o.MaxBackoff, o.Backoff)
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Client == nil {
		o.Client = o.Outbound.Client()
	}
	o.Client = tracing.Client(o.Tracer, o.Client)
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	return o
}

// lagEvery is how often the dispatcher asks for its oldest undelivered event.
const lagEvery = 5 * time.Second

// Dispatcher delivers the outbox: every instance runs one, and they share the work by
// claiming rows (in Postgres with FOR UPDATE SKIP LOCKED, in short transactions). It never
// runs on a request's path.
type Dispatcher struct {
	store  Store
	sealer *Sealer
	log    *slog.Logger
	opts   Options
	tracer trace.Tracer

	delivered atomic.Uint64
	retried   atomic.Uint64
	parked    atomic.Uint64
	// oldest is the creation time (unix nanoseconds) of the oldest undelivered event at
	// the last look, 0 when there was none.
	oldest atomic.Int64
	lagAt  time.Time
}

// NewDispatcher returns a dispatcher over store; nothing is delivered until Run.
func NewDispatcher(store Store, sealer *Sealer, log *slog.Logger, opts Options) *Dispatcher {
	return &Dispatcher{store: store, sealer: sealer, log: log, opts: opts.withDefaults(), tracer: tracing.Tracer(opts.Tracer)}
}

// Delivered counts events this instance delivered.
func (d *Dispatcher) Delivered() uint64 { return d.delivered.Load() }

// Retried counts failed attempts this instance scheduled a retry for.
func (d *Dispatcher) Retried() uint64 { return d.retried.Load() }

// Parked counts events this instance parked after their retry window.
func (d *Dispatcher) Parked() uint64 { return d.parked.Load() }

// OldestAge is how long the oldest undelivered (unparked) event has waited, as of the
// last look (every few seconds); 0 when none waits.
func (d *Dispatcher) OldestAge() time.Duration {
	at := d.oldest.Load()
	if at == 0 {
		return 0
	}
	return max(d.opts.Now().Sub(time.Unix(0, at)), 0)
}

// Lease is how long a claimed event stays claimed without a settlement.
func (d *Dispatcher) Lease() time.Duration { return 2*d.opts.Timeout + time.Second }

// Run delivers until ctx ends, then lets the deliveries in flight finish (each bounded by
// Timeout), records them and returns nil. Failures to reach the store are logged and
// retried with backoff and jitter.
func (d *Dispatcher) Run(ctx context.Context) error {
	failures := 0
	for {
		n, err := d.Round(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := time.Duration(0)
		switch {
		case err != nil:
			failures++
			wait = jitter(min(d.opts.Poll<<min(failures, 6), 30*time.Second))
			d.log.Warn("event dispatcher: round failed", "err", err, "retry_in", wait)
		case n < d.opts.Batch:
			failures = 0
			wait = jitter(d.opts.Poll)
		default:
			failures = 0
		}
		if d.opts.Now().Sub(d.lagAt) >= lagEvery {
			d.refreshLag(ctx)
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
	}
}

// refreshLag looks up the oldest undelivered event for OldestAge.
func (d *Dispatcher) refreshLag(ctx context.Context) {
	at, ok, err := d.store.OldestPending(ctx)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("event dispatcher: oldest pending event", "err", err)
		}
		return
	}
	d.lagAt = d.opts.Now()
	if !ok {
		d.oldest.Store(0)
		return
	}
	d.oldest.Store(at.UnixNano())
}

// Round claims the due events, posts them at once and records how each went; it returns
// how many it claimed. The posts and their settlement are detached from ctx, so a
// shutdown neither cuts a delivery short nor loses its outcome.
func (d *Dispatcher) Round(ctx context.Context) (int, error) {
	claims, err := d.store.ClaimEvents(ctx, d.opts.Now(), d.opts.Batch, d.Lease())
	if err != nil || len(claims) == 0 {
		return 0, err
	}
	dctx := context.WithoutCancel(ctx)
	results := make([]Result, len(claims))
	var wg sync.WaitGroup
	for i, c := range claims {
		wg.Go(func() { results[i] = d.deliver(dctx, c) })
	}
	wg.Wait()
	sctx, cancel := context.WithTimeout(dctx, d.opts.Timeout)
	defer cancel()
	if err := d.store.SettleEvents(sctx, results); err != nil {
		// The leases run out and the events are claimed again: delivered at least once.
		return len(claims), err
	}
	for _, r := range results {
		switch r.Outcome {
		case Delivered:
			d.delivered.Add(1)
		case Parked:
			d.parked.Add(1)
		default:
			d.retried.Add(1)
		}
	}
	return len(claims), nil
}

// deliver posts one claimed event and decides what comes next.
func (d *Dispatcher) deliver(ctx context.Context, c Claim) (r Result) {
	ctx, span := d.startSpan(ctx, c)
	defer func() { endSpan(span, r) }()
	r = Result{DeliveryID: c.DeliveryID, Attempt: c.Attempt}
	secret, err := d.sealer.Open(c.EndpointID, c.SecretSealed)
	if err == nil {
		r.HTTPStatus, err = Post(ctx, d.opts.Client, d.opts.Timeout, c.URL, secret, c.Event, d.opts.Now())
	}
	r.At = d.opts.Now()
	if err == nil {
		r.Outcome = Delivered
		return r
	}
	r.Error = err.Error()
	r.Next = r.At.Add(jitter(backoff(c.Attempt, d.opts.Backoff, d.opts.MaxBackoff)))
	r.Outcome = Pending
	if errors.Is(err, errUnseal) || r.Next.After(c.WindowStart.Add(d.opts.RetryFor)) {
		r.Outcome = Parked
	}
	return r
}

// startSpan starts the span of one delivery: the child of the span its verification began
// in when Origins knows it, else the root of a trace of its own.
func (d *Dispatcher) startSpan(ctx context.Context, c Claim) (context.Context, trace.Span) {
	if tracing.Off(d.opts.Tracer) {
		// A span that records nothing, never the caller's: endSpan ends it.
		return ctx, trace.SpanFromContext(context.Background())
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		attribute.String("otpgate.event.type", c.Event.Type), attribute.String("otpgate.event.id", c.Event.ID),
		attribute.String("otpgate.webhook.endpoint_id", c.EndpointID), attribute.Int("otpgate.webhook.attempt", c.Attempt))}
	if sc, ok := d.origin(c.Event); ok {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	return d.tracer.Start(ctx, "events.deliver", opts...)
}

// origin is the span the event's verification began in, if Origins knows it.
func (d *Dispatcher) origin(ev Event) (trace.SpanContext, bool) {
	if d.opts.Origins == nil {
		return trace.SpanContext{}, false
	}
	var subject struct {
		VerificationID string `json:"verification_id"`
	}
	if json.Unmarshal(ev.Data, &subject) != nil || subject.VerificationID == "" {
		return trace.SpanContext{}, false
	}
	return d.opts.Origins.Origin(subject.VerificationID)
}

// endSpan ends a delivery's span with its outcome and the receiver's status, never the
// error's text, which may quote the endpoint's URL.
func endSpan(span trace.Span, r Result) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("otpgate.webhook.outcome", r.Outcome))
		if r.HTTPStatus != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", r.HTTPStatus))
		}
		if r.Outcome != Delivered {
			span.SetStatus(codes.Error, r.Outcome)
		}
	}
	span.End()
}
