package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// TraceStore keeps the trace context (the W3C traceparent) of the sends whose trace is
// recorded, so that a send's delivery receipt and its verification's checks, which arrive
// later and perhaps at another instance, join the send's trace. internal/postgres and
// internal/inmem implement it.
type TraceStore interface {
	// SetSendTrace records the traceparent of a send, and of its verification when it has
	// none yet (the send that began it). Errors: otp.ErrNotFound for an unknown send.
	SetSendTrace(ctx context.Context, sendID, traceparent string) error
	// VerificationTrace is the traceparent a verification began in; "" for none.
	VerificationTrace(ctx context.Context, id string) (string, error)
	// ReceiptTrace is the traceparent of the send a receipt names, found as MarkDelivery
	// finds it; "" for none.
	ReceiptTrace(ctx context.Context, r receipt.Receipt) (string, error)
}

// Names of the spans that join a send's trace.
const (
	// SpanCheck is a check of a verification, in the trace its first send was made in.
	SpanCheck = "verification.check"
	// SpanReceipt is a delivery receipt of a send, in the send's trace.
	SpanReceipt = "delivery.receipt"
)

// Joined wraps an otp.Store so that each traced send keeps its trace context in traces,
// and each check of a verification records a SpanCheck span in the trace the
// verification began in. With tracing off or without traces it returns s itself.
func Joined(s otp.Store, traces TraceStore, tp trace.TracerProvider) otp.Store {
	if Off(tp) || traces == nil {
		return s
	}
	return &joinedStore{Store: s, traces: traces, tr: Tracer(tp)}
}

type joinedStore struct {
	otp.Store
	traces TraceStore
	tr     trace.Tracer
}

// BeginSend is the store's, then keeps the traceparent of a send whose span is sampled:
// one more statement for the recorded sends only. A failure to keep it costs the send
// nothing but the joining of its receipt and checks, and is noted on the span.
func (s *joinedStore) BeginSend(ctx context.Context, p otp.BeginSend) (otp.SendStart, error) {
	start, err := s.Store.BeginSend(ctx, p)
	if err != nil {
		return start, err
	}
	if tp := Traceparent(ctx); tp != "" {
		if err := s.traces.SetSendTrace(ctx, p.SendID, tp); err != nil {
			trace.SpanFromContext(ctx).AddEvent("otpgate.trace_context_not_kept")
		}
	}
	return start, nil
}

// Check is the store's, then records the check in the trace its verification began in.
func (s *joinedStore) Check(ctx context.Context, ref otp.CheckRef, decide func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	began := time.Now()
	v, outcome, err := s.Store.Check(ctx, ref, decide)
	if err != nil {
		return v, outcome, err
	}
	if tp, lerr := s.traces.VerificationTrace(ctx, v.ID); lerr == nil {
		join(ctx, s.tr, tp, SpanCheck, began, attribute.String("otpgate.check.outcome", string(outcome)))
	}
	return v, outcome, nil
}

// Receipts wraps a receipt store so that a receipt that settles a send records a
// SpanReceipt span in the send's trace. With tracing off or without traces it returns s.
func Receipts(s receipt.Store, traces TraceStore, tp trace.TracerProvider) receipt.Store {
	if Off(tp) || traces == nil {
		return s
	}
	return &joinedReceipts{Store: s, traces: traces, tr: Tracer(tp)}
}

type joinedReceipts struct {
	receipt.Store
	traces TraceStore
	tr     trace.Tracer
}

// MarkDelivery is the store's, then records a receipt that changed its send in the send's trace.
func (s *joinedReceipts) MarkDelivery(ctx context.Context, r receipt.Receipt) (receipt.Marked, error) {
	began := time.Now()
	changed, err := s.Store.MarkDelivery(ctx, r)
	if err != nil || !changed.Settled {
		return changed, err
	}
	if tp, lerr := s.traces.ReceiptTrace(ctx, r); lerr == nil {
		join(ctx, s.tr, tp, SpanReceipt, began, attribute.String("otpgate.provider", r.Provider),
			attribute.String("otpgate.delivery.status", r.Status))
	}
	return changed, nil
}

// Traceparent is the W3C traceparent of ctx's span when it is sampled, else "".
func Traceparent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	c := propagation.MapCarrier{}
	Propagator.Inject(ctx, c)
	return c.Get("traceparent")
}

// join records a span named name, from began to now, as the child of the span the stored
// traceparent names, linked to the request's own span (which began before the stored
// context was known, in a trace of its own or the caller's), and links the request's span
// back to it. A missing or unreadable traceparent records nothing.
func join(ctx context.Context, tr trace.Tracer, traceparent, name string, began time.Time, attrs ...attribute.KeyValue) {
	if traceparent == "" {
		return
	}
	stored := trace.SpanContextFromContext(Propagator.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent}))
	if !stored.IsValid() {
		return
	}
	here := trace.SpanFromContext(ctx)
	opts := []trace.SpanStartOption{trace.WithTimestamp(began), trace.WithAttributes(attrs...)}
	if sc := here.SpanContext(); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	_, span := tr.Start(trace.ContextWithRemoteSpanContext(ctx, stored), name, opts...)
	span.End()
	if here.IsRecording() && here.SpanContext().TraceID() != stored.TraceID() {
		here.AddLink(trace.Link{SpanContext: stored})
	}
}
