package delivery_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"otpgate/internal/delivery"
)

// TestTracing: every provider attempt is a span under the send's, naming the provider and
// the outcome, and neither the number, the text nor the code.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	a, b := &fake{name: "a"}, &fake{name: "b"}
	a.set(errRefused)
	r := newRouter(t, delivery.Config{Providers: []delivery.Provider{phone(a), phone(b)}, Tracer: tp})
	ctx, parent := tp.Tracer("test").Start(context.Background(), "send")
	if _, err := r.Deliver(ctx, sms("JP")); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	parent.End()
	var got []string
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if v := kv.Value.String(); strings.Contains(v, "9012345678") || strings.Contains(v, "483920") {
				t.Errorf("span %s attribute %s holds the number or the code: %q", s.Name(), kv.Key, v)
			}
		}
		if s.Name() != "delivery.attempt" {
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("attempt's parent: got %s, want the send's %s", s.Parent().SpanID(), parent.SpanContext().SpanID())
		}
		var provider, outcome string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "otpgate.provider":
				provider = kv.Value.AsString()
			case "otpgate.delivery.outcome":
				outcome = kv.Value.AsString()
			}
		}
		got = append(got, provider+":"+outcome)
	}
	if got, want := strings.Join(got, ","), "a:failed,b:sent"; got != want {
		t.Errorf("attempt spans: got %s, want %s", got, want)
	}
}
