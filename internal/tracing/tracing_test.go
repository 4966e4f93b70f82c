package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// recorder is a tracer provider that keeps every ended span.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, rec
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestHandler(t *testing.T) {
	t.Run("JoinsTheCallersTraceAndNamesTheRoute", func(t *testing.T) {
		tp, rec := recorder(t)
		h := Handler(tp, "public", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Route(r, "/v1/verifications", "req-1")
			w.WriteHeader(http.StatusCreated)
		}))
		req := httptest.NewRequest(http.MethodPost, "/v1/verifications?phone=%2B819012345678", nil)
		req.Header.Set("traceparent", parent)
		h.ServeHTTP(httptest.NewRecorder(), req)
		spans := rec.Ended()
		if len(spans) != 1 {
			t.Fatalf("got %d spans, want 1", len(spans))
		}
		s := spans[0]
		if got, want := s.SpanContext().TraceID().String(), "0af7651916cd43dd8448eb211c80319c"; got != want {
			t.Errorf("trace id: got %s, want %s", got, want)
		}
		if got, want := s.Parent().SpanID().String(), "b7ad6b7169203331"; got != want {
			t.Errorf("parent: got %s, want %s", got, want)
		}
		if got, want := s.Name(), "POST /v1/verifications"; got != want {
			t.Errorf("name: got %q, want %q", got, want)
		}
		if v, _ := attr(s, "http.response.status_code"); v.AsInt64() != 201 {
			t.Errorf("status: got %v, want 201", v.AsInt64())
		}
		if v, _ := attr(s, "otpgate.request_id"); v.AsString() != "req-1" {
			t.Errorf("request id: got %q, want req-1", v.AsString())
		}
		for _, kv := range s.Attributes() {
			if v := kv.Value.String(); v == "" || containsAny(v, "819012345678", "phone") {
				t.Errorf("attribute %s=%q: empty or holds the query", kv.Key, v)
			}
		}
	})
	t.Run("OffReturnsTheHandlerItself", func(t *testing.T) {
		next := &http.ServeMux{}
		for _, tp := range []trace.TracerProvider{nil, noop.NewTracerProvider()} {
			if got := Handler(tp, "public", next); got != http.Handler(next) {
				t.Errorf("Handler(%T) wrapped the handler; want it returned as it is", tp)
			}
		}
	})
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
	}
	return false
}

func TestClient(t *testing.T) {
	t.Run("SendsTraceparentOfTheCurrentTrace", func(t *testing.T) {
		tp, rec := recorder(t)
		got := make(chan string, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- r.Header.Get("traceparent")
			w.WriteHeader(http.StatusAccepted)
		}))
		defer srv.Close()
		ctx, span := Tracer(tp).Start(context.Background(), "attempt")
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/hook?token=s3cret", nil)
		resp, err := Client(tp, srv.Client()).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		span.End()
		if req.Header.Get("traceparent") != "" {
			t.Error("the caller's request was changed; want the header on a clone")
		}
		tpHeader := <-got
		sc := span.SpanContext()
		if len(tpHeader) != 55 || tpHeader[3:35] != sc.TraceID().String() {
			t.Fatalf("traceparent: got %q, want one of trace %s", tpHeader, sc.TraceID())
		}
		spans := rec.Ended()
		if len(spans) != 2 {
			t.Fatalf("got %d spans, want the client span and its parent", len(spans))
		}
		cs := spans[0]
		if cs.SpanKind() != trace.SpanKindClient || cs.Parent().SpanID() != sc.SpanID() {
			t.Errorf("client span: kind %v parent %s; want client under %s", cs.SpanKind(), cs.Parent().SpanID(), sc.SpanID())
		}
		if tpHeader[36:52] != cs.SpanContext().SpanID().String() {
			t.Errorf("traceparent names span %s, want the client span %s", tpHeader[36:52], cs.SpanContext().SpanID())
		}
		for _, kv := range cs.Attributes() {
			if containsAny(kv.Value.String(), "s3cret", "/hook") {
				t.Errorf("attribute %s holds the URL's path or query: %q", kv.Key, kv.Value.String())
			}
		}
		if v, _ := attr(cs, "http.response.status_code"); v.AsInt64() != 202 {
			t.Errorf("status: got %d, want 202", v.AsInt64())
		}
	})
	t.Run("OffReturnsTheClientItself", func(t *testing.T) {
		c := &http.Client{}
		if Client(noop.NewTracerProvider(), c) != c {
			t.Error("got a new client; want the same one with tracing off")
		}
	})
}

func TestOrigins(t *testing.T) {
	tp, _ := recorder(t)
	o := NewOrigins(2, time.Minute)
	now := time.Unix(1000, 0)
	o.now = func() time.Time { return now }
	ctx, span := Tracer(tp).Start(context.Background(), "send")
	defer span.End()
	o.Remember(ctx, "a")
	o.Remember(context.Background(), "unsampled")
	if _, ok := o.Origin("unsampled"); ok {
		t.Error("remembered a context without a span")
	}
	if sc, ok := o.Origin("a"); !ok || sc.TraceID() != span.SpanContext().TraceID() {
		t.Errorf("Origin(a): got %v %v, want the send's span", sc.TraceID(), ok)
	}
	o.Remember(ctx, "b")
	o.Remember(ctx, "c")
	if _, ok := o.Origin("a"); ok {
		t.Error("a outlived the bound of 2")
	}
	now = now.Add(2 * time.Minute)
	if _, ok := o.Origin("c"); ok {
		t.Error("c outlived its ttl")
	}
}
