package events_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/events"
	"otpgate/internal/inmem"
	"otpgate/internal/testenv/fixture"
)

// origins is a fixed map of verification ids to the spans they began in.
type origins map[string]trace.SpanContext

func (o origins) Origin(id string) (trace.SpanContext, bool) { sc, ok := o[id]; return sc, ok }

// TestTracing: each delivery is a span that joins the trace its verification began in and
// sends that trace's traceparent; nothing in the spans names the number.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	store, sealer := inmem.New(), newSealer(t)
	var mu sync.Mutex
	var parents []string
	rc := &receiver{t: t, seen: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		mu.Unlock()
		rc.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	addEndpoint(t, store, sealer, srv.URL)
	const phone = "+15550100009"
	id := verify(t, store, phone)
	_, origin := tp.Tracer("test").Start(context.Background(), "send")
	origin.End()

	opts := fastOptions()
	opts.Tracer, opts.Origins = tp, origins{id: origin.SpanContext()}
	d := events.NewDispatcher(store, sealer, slog.New(slog.DiscardHandler), opts)
	run(t, d)
	fixture.Eventually(t, "3 events", 10*time.Second, func() bool { return len(rc.events()) == 3 })
	// A delivery's span ends after the receiver has answered, so it may end after the
	// receiver counted its event.
	fixture.Eventually(t, "3 delivery spans", 10*time.Second, func() bool {
		n := 0
		for _, s := range rec.Ended() {
			if s.Name() == "events.deliver" {
				n++
			}
		}
		return n >= 3
	})

	mu.Lock()
	defer mu.Unlock()
	want := origin.SpanContext().TraceID().String()
	for _, p := range parents {
		if len(p) != 55 || p[3:35] != want {
			t.Errorf("traceparent: got %q, want one of trace %s", p, want)
		}
	}
	var delivered int
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), "5550100009") {
				t.Errorf("span %s attribute %s holds the number", s.Name(), kv.Key)
			}
		}
		if s.Name() == "events.deliver" {
			delivered++
			if s.Parent().SpanID() != origin.SpanContext().SpanID() {
				t.Errorf("delivery span's parent: got %s, want the origin %s", s.Parent().SpanID(), origin.SpanContext().SpanID())
			}
		}
	}
	if delivered != 3 {
		t.Errorf("delivery spans: got %d, want 3", delivered)
	}
}
