package server

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// TraceSettings are the standard OpenTelemetry variables otpgate reads (docs/traces.md).
// Tracing is on when an OTLP endpoint is set, and costs nothing otherwise. The exporter
// reads the rest of its OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression,
// certificates) from the process's environment itself.
type TraceSettings struct {
	// OTLPEndpoint is the collector's base URL; traces go to its /v1/traces.
	OTLPEndpoint string `env:"OTEL_EXPORTER_OTLP_ENDPOINT"`
	// OTLPTracesEndpoint is the full URL traces go to; it wins over OTLPEndpoint.
	OTLPTracesEndpoint string `env:"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"`
	// Protocols: only http/protobuf is built in.
	OTLPProtocol       string `env:"OTEL_EXPORTER_OTLP_PROTOCOL" envDefault:"http/protobuf"`
	OTLPTracesProtocol string `env:"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"`
	// TracesExporter "none" turns tracing off with an endpoint set.
	TracesExporter string `env:"OTEL_TRACES_EXPORTER" envDefault:"otlp"`
	SDKDisabled    bool   `env:"OTEL_SDK_DISABLED"`
	ServiceName    string `env:"OTEL_SERVICE_NAME" envDefault:"otpgate"`
	// TracesSampler and TracesSamplerArg are the SDK's sampler: parentbased_always_on by
	// default, so a caller's sampled traceparent is followed.
	TracesSampler    string `env:"OTEL_TRACES_SAMPLER" envDefault:"parentbased_always_on"`
	TracesSamplerArg string `env:"OTEL_TRACES_SAMPLER_ARG"`
}

// samplers are the values of OTEL_TRACES_SAMPLER otpgate knows.
var samplers = []string{"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}

// tracesOn reports whether traces are exported.
func (c *config) tracesOn() bool {
	return c.tracesURL() != "" && !c.SDKDisabled && c.TracesExporter != "none"
}

// tracesURL is where traces are posted: the traces endpoint as it is, or the base
// endpoint's /v1/traces; "" when neither is set.
func (c *config) tracesURL() string {
	if c.OTLPTracesEndpoint != "" {
		return c.OTLPTracesEndpoint
	}
	if c.OTLPEndpoint != "" {
		return strings.TrimRight(c.OTLPEndpoint, "/") + "/v1/traces"
	}
	return ""
}

// samplerRatio is OTEL_TRACES_SAMPLER_ARG as the ratio samplers read it: 1 when unset.
func (c *config) samplerRatio() float64 {
	if c.TracesSamplerArg == "" {
		return 1
	}
	f, _ := strconv.ParseFloat(c.TracesSamplerArg, 64)
	return f
}

// checkTraces refuses tracing settings the exporter could not honour.
func (c *config) checkTraces() error {
	for _, v := range []struct{ name, val string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", c.OTLPEndpoint}, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.OTLPTracesEndpoint},
	} {
		if v.val == "" {
			continue
		}
		u, err := url.Parse(v.val)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("config: %s=%s: want an http:// or https:// URL", v.name, v.val)
		}
	}
	for _, v := range []struct{ name, val string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", c.OTLPProtocol}, {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", c.OTLPTracesProtocol},
	} {
		if v.val != "" && v.val != "http/protobuf" {
			return fmt.Errorf("config: %s=%s: only http/protobuf is supported", v.name, v.val)
		}
	}
	if c.TracesExporter != "otlp" && c.TracesExporter != "none" {
		return fmt.Errorf("config: OTEL_TRACES_EXPORTER=%s: want otlp or none", c.TracesExporter)
	}
	if !slices.Contains(samplers, c.TracesSampler) {
		return fmt.Errorf("config: OTEL_TRACES_SAMPLER=%s: want one of %s", c.TracesSampler, strings.Join(samplers, ", "))
	}
	if c.TracesSamplerArg != "" {
		f, err := strconv.ParseFloat(c.TracesSamplerArg, 64)
		if err != nil || f < 0 || f > 1 {
			return fmt.Errorf("config: OTEL_TRACES_SAMPLER_ARG=%s: want a ratio from 0 to 1", c.TracesSamplerArg)
		}
	}
	return nil
}
