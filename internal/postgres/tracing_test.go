package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
)

// TestTracing: every statement of a traced pool is a span under the caller's, naming its
// text with placeholders and never an argument: the number, the code's hash.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx := context.Background()
	pool, err := postgres.Open(ctx, testenv.PostgresDSN(t), postgres.Tracing(tp))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	store := postgres.New(pool, testenv.DataKeys())
	const phone = "+819012345678"
	sctx, parent := tp.Tracer("test").Start(ctx, "send")
	_, err = store.BeginSend(sctx, otp.BeginSend{
		Phone: phone, Channel: "sms", Country: "JP", Locale: "en", ClientIP: "192.0.2.1", Provider: "test",
		Now: time.Now().UTC(), TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5,
		NewVerificationID: uuid.NewString(), SendID: uuid.NewString(),
		CodeHash: func(string) []byte { return []byte("code-hash-123456") },
	})
	parent.End()
	if err != nil {
		t.Fatalf("BeginSend: %v", err)
	}
	// Outside any trace, as the background loops run, a statement makes no span.
	before := len(rec.Ended())
	if err := pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.Ended()); got != before {
		t.Errorf("a statement outside a trace made %d spans, want none", got-before)
	}
	var under []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if v := kv.Value.String(); strings.Contains(v, "9012345678") || strings.Contains(v, "123456") {
				t.Errorf("span %q attribute %s holds an argument: %q", s.Name(), kv.Key, v)
			}
		}
		if s.Parent().SpanID() == parent.SpanContext().SpanID() {
			under = append(under, s)
		}
	}
	if len(under) == 0 {
		t.Fatal("no statement span under the caller's span")
	}
	s := under[0]
	if !strings.HasPrefix(s.Name(), "postgres ") {
		t.Errorf("span name: got %q, want postgres <operation>", s.Name())
	}
	var text string
	for _, kv := range s.Attributes() {
		if kv.Key == "db.query.text" {
			text = kv.Value.AsString()
		}
	}
	if !strings.Contains(text, "$1") {
		t.Errorf("db.query.text: got %q, want the statement with its placeholders", text)
	}
}

// TestTracingOff: a pool opened without a provider, or with the no-op one, has no tracer.
func TestTracingOff(t *testing.T) {
	pool, err := postgres.Open(context.Background(), testenv.PostgresDSN(t), postgres.Tracing(nil))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer pool.Close()
	if tr := pool.Config().ConnConfig.Tracer; tr != nil {
		t.Errorf("tracer: got %T, want none", tr)
	}
}
