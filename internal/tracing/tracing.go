// Package tracing is otpgate's OpenTelemetry kit: the server span of every request, the
// client span and W3C traceparent of every outgoing HTTP call, the origins that let a
// webhook delivery join the trace of the request whose change it reports, and the trace
// context a send keeps in the store so that its receipt and its checks join its trace. It holds no
// state of its own: the trace.TracerProvider is built by the wiring and passed in, a
// no-op one when tracing is off, in which case every helper here steps aside.
//
// Spans carry names, routes, statuses, counts and outcomes, never a phone number, an
// email address, a code, a secret or a token (docs/traces.md).
package tracing

import (
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of otpgate's own spans.
const Scope = "otpgate"

// Propagator is the W3C trace context (traceparent, tracestate) that otpgate reads from
// requests and writes into outgoing calls.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Off reports whether tp records nothing at all (nil or the no-op provider), so that a
// helper can skip even the cost of a non-recording span.
func Off(tp trace.TracerProvider) bool {
	if tp == nil {
		return true
	}
	_, noopTP := tp.(noop.TracerProvider)
	return noopTP
}

// Tracer is tp's tracer of otpgate's scope; nil tp is the no-op one.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(Scope)
}
