package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/otp"
)

// Origins remembers, for a while and up to a bound, which trace each verification began
// in, so that the webhook deliveries of its events (claimed later from the outbox, by a
// loop that runs on no request's path) join that trace. It is best effort: an instance
// knows only the verifications it served, and forgets the oldest past its bound; a
// delivery whose origin is unknown starts a trace of its own.
type Origins struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[string]origin
	// order is the insertion order of m's keys, oldest first, for eviction.
	order []string
}

type origin struct {
	sc trace.SpanContext
	at time.Time
}

// NewOrigins keeps up to max origins for ttl each.
func NewOrigins(max int, ttl time.Duration) *Origins {
	return &Origins{ttl: ttl, max: max, now: time.Now, m: make(map[string]origin)}
}

// Remember records that the verification id began in ctx's trace; a context without a
// sampled span records nothing.
func (o *Origins) Remember(ctx context.Context, id string) {
	sc := trace.SpanContextFromContext(ctx)
	if o == nil || id == "" || !sc.IsValid() || !sc.IsSampled() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.m[id]; !ok {
		o.order = append(o.order, id)
	}
	o.m[id] = origin{sc: sc, at: o.now()}
	for len(o.order) > o.max {
		delete(o.m, o.order[0])
		o.order = o.order[1:]
	}
}

// Origin is the span the verification id began in, if it is still remembered.
func (o *Origins) Origin(id string) (trace.SpanContext, bool) {
	if o == nil {
		return trace.SpanContext{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	or, ok := o.m[id]
	if !ok || o.now().Sub(or.at) > o.ttl {
		return trace.SpanContext{}, false
	}
	return or.sc, true
}

// Store wraps an otp.Store so that every verification a send begins is remembered in
// origins with the send's trace.
func Store(s otp.Store, origins *Origins) otp.Store {
	if origins == nil {
		return s
	}
	return &originStore{Store: s, origins: origins}
}

type originStore struct {
	otp.Store
	origins *Origins
}

// BeginSend is the store's, remembering the verification's origin.
func (s *originStore) BeginSend(ctx context.Context, p otp.BeginSend) (otp.SendStart, error) {
	start, err := s.Store.BeginSend(ctx, p)
	if err == nil {
		s.origins.Remember(ctx, start.Verification.ID)
	}
	return start, err
}
