package server

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// PublicHandler builds, from env, a server's public handler and background loops over
// tp, as serve does, without listeners; they are stopped at cleanup. BenchmarkTracedSend
// measures the send path through it.
func PublicHandler(b testing.TB, env map[string]string, tp oteltrace.TracerProvider) http.Handler {
	b.Helper()
	cfg, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	p, err := newParts(ctx, cfg, log, tp)
	if err != nil {
		b.Fatal(err)
	}
	s, err := newServices(ctx, cfg, p, log)
	if err != nil {
		p.close()
		b.Fatal(err)
	}
	stop := startLoops(ctx, log, s.loops(p))
	b.Cleanup(func() {
		stop(ctx)
		p.close()
		if sdk, ok := tp.(*sdktrace.TracerProvider); ok {
			_ = sdk.Shutdown(ctx)
		}
	})
	return s.public
}
