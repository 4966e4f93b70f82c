package tracing

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Handler wraps a listener's handler so that every request is a server span, the child of
// the caller's traceparent when it sent one. The span is named by the method until the
// router names it by its route pattern (Route); the raw path is never recorded, since
// some paths hold a number or an address. With tracing off it returns next itself.
func Handler(tp trace.TracerProvider, listener string, next http.Handler) http.Handler {
	if Off(tp) {
		return next
	}
	tr := Tracer(tp)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tr.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("otpgate.listener", listener)))
		defer span.End()
		if !span.IsRecording() {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	})
}

// Route names the request's server span by its route pattern, once the router found it,
// and records the request id; it costs nothing when the span records nothing.
func Route(r *http.Request, pattern, requestID string) {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return
	}
	if pattern != "" {
		span.SetName(r.Method + " " + pattern)
		span.SetAttributes(attribute.String("http.route", pattern))
	}
	if requestID != "" {
		span.SetAttributes(attribute.String("otpgate.request_id", requestID))
	}
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Client returns a copy of c whose requests are client spans and carry the current
// trace's traceparent, so that a provider or a webhook receiver can join the trace. The
// span names the peer's host only: a URL's path or query may hold a secret. With
// tracing off it returns c itself; nil c is treated as an empty client.
func Client(tp trace.TracerProvider, c *http.Client) *http.Client {
	if Off(tp) {
		return c
	}
	var out http.Client
	if c != nil {
		out = *c
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = &transport{base: base, tr: Tracer(tp)}
	return &out
}

// transport is the round tripper of Client.
type transport struct {
	base http.RoundTripper
	tr   trace.Tracer
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, span := t.tr.Start(r.Context(), r.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("server.address", r.URL.Hostname())))
	defer span.End()
	// A RoundTripper must not change the caller's request: the header goes on a clone.
	r = r.Clone(ctx)
	Propagator.Inject(ctx, propagation.HeaderCarrier(r.Header))
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		span.SetStatus(codes.Error, "transport error")
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	}
	return resp, nil
}
