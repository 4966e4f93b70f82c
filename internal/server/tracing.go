package server

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	oteltrace "go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// newTracerProvider is the provider every part traces with: spans batched and exported
// over OTLP/HTTP when an endpoint is set, else the no-op provider, with which every part
// skips its tracing. shutdown flushes what is batched; call it last.
func newTracerProvider(ctx context.Context, cfg config) (tp oteltrace.TracerProvider, shutdown func(context.Context) error, err error) {
	if !cfg.tracesOn() {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.tracesURL()))
	if err != nil {
		return nil, nil, fmt.Errorf("config: OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	// The process's OTEL_RESOURCE_ATTRIBUTES first, then the service's own name and version.
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(Version)))
	if err != nil {
		return nil, nil, fmt.Errorf("config: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(cfg.sampler()))
	return sdk, sdk.Shutdown, nil
}

// sampler is OTEL_TRACES_SAMPLER with its argument, as checkTraces admitted it.
func (c *config) sampler() sdktrace.Sampler {
	switch c.TracesSampler {
	case "always_on":
		return sdktrace.AlwaysSample()
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(c.samplerRatio())
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.samplerRatio()))
	}
	return sdktrace.ParentBased(sdktrace.AlwaysSample())
}
