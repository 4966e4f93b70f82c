package server

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"otpgate/internal/tracing"
)

func TestTraceConfig(t *testing.T) {
	load := func(t *testing.T, env map[string]string) (config, error) {
		t.Helper()
		return loadConfig(func(k string) string { return env[k] })
	}
	t.Run("OffWithoutAnEndpoint", func(t *testing.T) {
		for name, env := range map[string]map[string]string{
			"Nothing":      {},
			"SDKDisabled":  {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
			"ExporterNone": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"},
			"SamplerOnly":  {"OTEL_TRACES_SAMPLER": "always_on"},
		} {
			cfg, err := load(t, env)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			tp, shutdown, err := newTracerProvider(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !tracing.Off(tp) {
				t.Errorf("%s: got %T, want the no-op provider", name, tp)
			}
			_ = shutdown(context.Background())
		}
	})
	t.Run("OnWithAnEndpoint", func(t *testing.T) {
		for _, tc := range []struct {
			env  map[string]string
			want string
		}{
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}, "http://collector:4318/v1/traces"},
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://other/traces"}, "https://other/traces"},
		} {
			cfg, err := load(t, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.tracesURL(); got != tc.want || !cfg.tracesOn() {
				t.Errorf("%v: got %q (on %v), want %q on", tc.env, got, cfg.tracesOn(), tc.want)
			}
			tp, shutdown, err := newTracerProvider(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tp.(*sdktrace.TracerProvider); !ok {
				t.Errorf("got %T, want the SDK's provider", tp)
			}
			_ = shutdown(context.Background())
		}
	})
	t.Run("Sampler", func(t *testing.T) {
		cfg, err := load(t, map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01"})
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.sampler().Description(); !strings.Contains(got, "TraceIDRatioBased{0.01}") || !strings.HasPrefix(got, "ParentBased") {
			t.Errorf("sampler: got %s, want parent-based at 1 %%", got)
		}
		cfg, _ = load(t, nil)
		if got := cfg.sampler().Description(); !strings.HasPrefix(got, "ParentBased{root:AlwaysOnSampler") {
			t.Errorf("default sampler: got %s, want parent-based always on", got)
		}
	})
	t.Run("BadValuesStopStartUpNamingTheVariable", func(t *testing.T) {
		for name, tc := range map[string]struct{ key, val string }{
			"EndpointScheme":  {"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"},
			"TracesEndpoint":  {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://collector/"},
			"Protocol":        {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
			"TracesProtocol":  {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"},
			"Exporter":        {"OTEL_TRACES_EXPORTER", "zipkin"},
			"Sampler":         {"OTEL_TRACES_SAMPLER", "sometimes"},
			"SamplerArg":      {"OTEL_TRACES_SAMPLER_ARG", "1.5"},
			"SamplerArgWords": {"OTEL_TRACES_SAMPLER_ARG", "half"},
		} {
			_, err := load(t, map[string]string{tc.key: tc.val})
			if err == nil || !strings.Contains(err.Error(), tc.key+"="+tc.val) {
				t.Errorf("%s: got %v, want an error naming %s=%s", name, err, tc.key, tc.val)
			}
		}
	})
}
