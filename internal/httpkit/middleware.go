package httpkit

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/otp"
	"otpgate/internal/tracing"
)

// ctxKey keys the values the middleware hands to handlers.
type ctxKey int

// requestInfoKey keys the request's *requestInfo.
const requestInfoKey ctxKey = 0

// RequestInfo is what the middleware learned about a request, in one context value, so
// that each middleware need not copy the request to add its own.
type RequestInfo struct {
	id, ClientIP string
	// app is the app of a public request, set by withApp; nil means the default app.
	App *otp.App
}

// RequestInfoFrom returns the request's info, or nil outside a request.
func RequestInfoFrom(ctx context.Context) *RequestInfo {
	ri, _ := ctx.Value(requestInfoKey).(*RequestInfo)
	return ri
}

// MaxRequestIDLen bounds an incoming X-Request-Id that is echoed and logged.
const MaxRequestIDLen = 128

// RequestIDFrom returns the request's id, or "" outside a request.
func RequestIDFrom(ctx context.Context) string {
	if ri := RequestInfoFrom(ctx); ri != nil {
		return ri.id
	}
	return ""
}

// ClientIPFrom returns the request's client IP as the limiter keys it.
func ClientIPFrom(ctx context.Context) string {
	if ri := RequestInfoFrom(ctx); ri != nil {
		return ri.ClientIP
	}
	return ""
}

// Common is the middleware every listener runs, outermost first: the request id and
// the client IP exist before anything logs; the access log sees the 500 that recovery
// writes; the body limit covers every handler. trusted are the proxies whose
// X-Forwarded-For is believed; v6prefix keys IPv6 clients (see ClientIP); maxBody caps
// request bodies; observe, when set, is called once per request.
func Common(log *slog.Logger, observe func(route string, status int, d time.Duration), trusted []netip.Prefix, v6prefix int, maxBody int64) []func(http.Handler) http.Handler {
	return []func(http.Handler) http.Handler{
		requestID,
		clientIP(trusted, v6prefix),
		accessLog(log, observe),
		recoverPanics(log),
		limitBody(maxBody),
	}
}

// requestID keeps a sane incoming X-Request-Id, so one id follows a request through
// the proxies, or makes one; the response echoes it.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !SaneRequestID(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestInfoKey, &RequestInfo{id: id})))
	})
}

// SaneRequestID accepts ids that are safe to log and echo: short, and made of letters,
// digits and the punctuation common id formats use.
func SaneRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '+', c == '=':
		default:
			return false
		}
	}
	return true
}

// clientIP stores the client address (see ClientIP) in the request's context.
func clientIP(trusted []netip.Prefix, v6prefix int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ip := ClientIP(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), trusted, v6prefix)
			if ri := RequestInfoFrom(r.Context()); ri != nil {
				ri.ClientIP = ip // set before anything downstream reads it
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestInfoKey, &RequestInfo{ClientIP: ip})))
		})
	}
}

// accessLog writes one line per request. It names the route pattern, never the raw
// path, and never a body, header value, code or token.
func accessLog(log *slog.Logger, observe func(route string, status int, d time.Duration)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &StatusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			d := time.Since(start)
			pattern := ""
			if rc := chi.RouteContext(r.Context()); rc != nil {
				pattern = rc.RoutePattern()
			}
			route := pattern
			if route == "" {
				route = "unmatched"
			}
			status := sw.statusOr200()
			id := RequestIDFrom(r.Context())
			tracing.Route(r, pattern, id)
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Duration("duration", d),
				slog.Int64("bytes", sw.bytes),
				slog.String("client_ip", ClientIPFrom(r.Context())),
				slog.String("request_id", id),
			}
			// The trace id joins the line to the request's trace, when there is one.
			if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
				attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
			if observe != nil {
				observe(route, status, d)
			}
		})
	}
}

// recoverPanics turns a handler's panic into a logged stack and a 500 problem, when the
// response has not started yet. http.ErrAbortHandler keeps its meaning.
func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &StatusWriter{ResponseWriter: w}
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.ErrorContext(r.Context(), "panic serving request",
					"request_id", RequestIDFrom(r.Context()), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.Status == 0 {
					WriteProblem(sw, r, log, fmt.Errorf("panic: %v", v))
				}
			}()
			next.ServeHTTP(sw, r)
		})
	}
}

// limitBody caps request bodies; reading past the cap fails with *http.MaxBytesError.
func limitBody(n int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, n)
			next.ServeHTTP(w, r)
		})
	}
}

// StatusWriter remembers the status and counts the body bytes of a response.
type StatusWriter struct {
	http.ResponseWriter
	Status int
	bytes  int64
}

// WriteHeader records status and passes it on.
func (w *StatusWriter) WriteHeader(status int) {
	if w.Status == 0 && status >= 200 {
		w.Status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write counts the body bytes, answering 200 first if nothing was.
func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusOr200 is the status sent, counting a handler that wrote nothing as 200.
func (w *StatusWriter) statusOr200() int {
	if w.Status == 0 {
		return http.StatusOK
	}
	return w.Status
}
