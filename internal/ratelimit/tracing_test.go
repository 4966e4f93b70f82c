package ratelimit

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// TestTracing: every script call is a span under the caller's, naming its mode and
// outcome and never a key, which holds the number.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rdb, prefix := testenv.Redis(t)
	l := New(rdb, prefix, Tracing(tp))
	phone := "+819012345678"
	lim := []rate.Limit{{Scope: "phone", Key: phone, Rules: mustRules(t, "1/1m")}}

	ctx, parent := tp.Tracer("test").Start(context.Background(), "send")
	if d, err := l.Allow(ctx, lim); err != nil || !d.Allowed {
		t.Fatalf("first Allow: %v %v, want allowed", d.Allowed, err)
	}
	if d, err := l.Allow(ctx, lim); err != nil || d.Allowed {
		t.Fatalf("second Allow: %v %v, want denied", d.Allowed, err)
	}
	parent.End()

	var statuses []string
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), "9012345678") {
				t.Errorf("span %s attribute %s holds the number: %q", s.Name(), kv.Key, kv.Value.String())
			}
		}
		if s.Name() != "ratelimit.script" {
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("script span's parent: got %s, want the caller's %s", s.Parent().SpanID(), parent.SpanContext().SpanID())
		}
		statuses = append(statuses, value(s, "otpgate.ratelimit.status"))
	}
	if got, want := strings.Join(statuses, ","), "allowed,denied"; got != want {
		t.Errorf("script spans' statuses: got %s, want %s", got, want)
	}
}

func value(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if kv.Key == attribute.Key(key) {
			return kv.Value.String()
		}
	}
	return ""
}
