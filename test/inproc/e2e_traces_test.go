package inproc

import (
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/server/servertest"
	"otpgate/internal/sms"
	"otpgate/internal/tracing"
)

// span is one span as an OTLP receiver got it.
type span struct {
	name, trace, id, parent string
	attrs                   map[string]string
	// text is every attribute of the span and its events, for scanning.
	text string
}

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it decodes each
// ExportTraceServiceRequest and keeps its spans.
type otlpReceiver struct {
	URL string
	t   testing.TB
	mu  sync.Mutex
	got []span
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	rc := &otlpReceiver{t: t}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		rc.t.Errorf("otlp: got %s %s (%s), want a protobuf POST to /v1/traces", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &req)
	}
	if err != nil {
		rc.t.Errorf("otlp: bad request: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var got []span
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := span{name: s.Name, trace: hex.EncodeToString(s.TraceId), id: hex.EncodeToString(s.SpanId),
					parent: hex.EncodeToString(s.ParentSpanId), attrs: map[string]string{}}
				var text []string
				add := func(kvs []*commonpb.KeyValue) {
					for _, kv := range kvs {
						v := anyValue(kv.Value)
						sp.attrs[kv.Key] = v
						text = append(text, kv.Key+"="+v)
					}
				}
				add(s.Attributes)
				for _, ev := range s.Events {
					add(ev.Attributes)
				}
				sp.text = strings.Join(text, " ")
				got = append(got, sp)
			}
		}
	}
	rc.mu.Lock()
	rc.got = append(rc.got, got...)
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}

func (rc *otlpReceiver) spans() []span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// traceOf is the trace id of a W3C traceparent, or "".
func traceOf(traceparent string) string {
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		return ""
	}
	return parts[1]
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestTraces: with OTEL_EXPORTER_OTLP_ENDPOINT set, a send and a check that carry the
// caller's traceparent make one trace, exported over OTLP/HTTP, whose spans run from the
// requests through the limiter's script calls and the SQL statements to the provider
// attempt and the webhook deliveries; the provider and the webhook receiver get the
// trace's traceparent; and no span names the number or the code.
func TestTraces(t *testing.T) {
	otlp := newOTLPReceiver(t)
	p := servertest.NewProvider(t)
	hooks := eventstest.New(t, servertest.HookSecret)
	in := servertest.Start(t, servertest.ProdEnv(t, p, servertest.EventsEnv(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL, "OTEL_SERVICE_NAME": "otpgate-test",
	})))
	addHook(t, hookClient(t), in, "default", hooks.URL, events.VerificationCreated, events.VerificationSent, events.VerificationApproved)

	traceID, callerSpan := randomHex(16), randomHex(8)
	traceparent := "00-" + traceID + "-" + callerSpan + "-01"
	const phone = "+819012345671"
	servertest.WantStatus(t, servertest.Send(t, in, phone, "traceparent", traceparent), http.StatusCreated, "")
	code := servertest.LastCode(t, p, phone)
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": code}, "traceparent", traceparent), http.StatusOK, "")

	if got := p.Received(phone)[0].Traceparent; traceOf(got) != traceID {
		t.Errorf("provider got traceparent %q, want one of trace %s", got, traceID)
	}
	if !hooks.WaitFor(20*time.Second, func(evs []events.Event) bool { return len(evs) >= 3 }) {
		t.Fatalf("webhook receiver got %d events, want 3", len(hooks.Events()))
	}
	for _, ev := range hooks.Events() {
		if got := hooks.Traceparent(ev.ID); traceOf(got) != traceID {
			t.Errorf("webhook %s came with traceparent %q, want one of trace %s", ev.Type, got, traceID)
		}
	}

	// Stopping flushes the batched spans.
	in.Cancel()
	if err := in.Wait(30 * time.Second); err != nil {
		t.Fatalf("server stop: %v", err)
	}
	all := otlp.spans()
	byID := map[string]span{}
	var inTrace []span
	for _, s := range all {
		if s.trace == traceID {
			inTrace = append(inTrace, s)
			byID[s.id] = s
		}
		for _, secret := range []string{"9012345671", code} {
			if strings.Contains(s.text, secret) {
				t.Errorf("span %q holds the number or the code: %s", s.name, s.text)
			}
		}
	}
	// Every span of the trace descends from the caller's span.
	for _, s := range inTrace {
		at := s
		for i := 0; at.parent != callerSpan; i++ {
			next, ok := byID[at.parent]
			if !ok || i > 20 {
				t.Errorf("span %q does not descend from the caller's span (stops at %q, parent %q)", s.name, at.name, at.parent)
				break
			}
			at = next
		}
	}
	has := func(what string, ok func(span) bool) {
		t.Helper()
		if !slices.ContainsFunc(inTrace, ok) {
			var names []string
			for _, s := range inTrace {
				names = append(names, s.name)
			}
			t.Errorf("trace has no %s; its spans: %s", what, strings.Join(names, ", "))
		}
	}
	has("send request", func(s span) bool {
		return s.name == "POST /v1/verifications" && s.attrs["http.response.status_code"] == "201"
	})
	has("check request", func(s span) bool {
		return s.name == "POST /v1/verifications/check" && s.attrs["http.response.status_code"] == "200"
	})
	has("limiter script call", func(s span) bool {
		return s.name == "ratelimit.script" && s.attrs["otpgate.ratelimit.status"] == "allowed"
	})
	has("SQL statement", func(s span) bool { return strings.HasPrefix(s.name, "postgres ") && s.attrs["db.query.text"] != "" })
	has("provider attempt", func(s span) bool {
		return s.name == "delivery.attempt" && s.attrs["otpgate.delivery.outcome"] == "sent"
	})
	has("provider HTTP call", func(s span) bool { return s.name == "POST" && byID[s.parent].name == "delivery.attempt" })
	has("webhook delivery", func(s span) bool {
		return s.name == "events.deliver" && s.attrs["otpgate.event.type"] == events.VerificationApproved
	})
	// A statement of the send runs under the send's request, through the service.
	has("statement under the send", func(s span) bool {
		if !strings.HasPrefix(s.name, "postgres ") {
			return false
		}
		for at, ok := byID[s.parent]; ok; at, ok = byID[at.parent] {
			if at.name == "POST /v1/verifications" {
				return true
			}
		}
		return false
	})

}

// TestOneTraceAcrossAVerification: with tracing on, a send made without a traceparent, its
// provider attempt, the send's delivery receipt (a signed callback, which carries none) and
// the check of its code (made without one too, later) are spans of one trace: the send
// keeps its trace context in the store, and the receipt and the check join it.
func TestOneTraceAcrossAVerification(t *testing.T) {
	otlp := newOTLPReceiver(t)
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL}))

	const phone = "+819012345672"
	servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
	got := p.Received(phone)
	if len(got) != 1 {
		t.Fatalf("the provider got %d messages, want 1", len(got))
	}
	body := `{"id":"` + got[0].ID + `","status":"delivered"}`
	if st := servertest.PostReceipt(t, in, "webhook", body, sms.Sign(p.Secret, time.Now(), []byte(body))); st != http.StatusNoContent {
		t.Fatalf("receipt: got %d, want 204", st)
	}
	code := servertest.LastCode(t, p, phone)
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": code}), http.StatusOK, "")

	in.Cancel()
	if err := in.Wait(30 * time.Second); err != nil {
		t.Fatalf("server stop: %v", err)
	}
	all := otlp.spans()
	var sendSpan span
	for _, s := range all {
		if s.name == "POST /v1/verifications" && s.attrs["http.response.status_code"] == "201" {
			sendSpan = s
		}
	}
	if sendSpan.trace == "" {
		t.Fatalf("no span of the send among %d", len(all))
	}
	inTrace := map[string][]span{}
	for _, s := range all {
		if s.trace == sendSpan.trace {
			inTrace[s.name] = append(inTrace[s.name], s)
		}
		for _, secret := range []string{"9012345672", code} {
			if strings.Contains(s.text, secret) {
				t.Errorf("span %q holds the number or the code: %s", s.name, s.text)
			}
		}
	}
	step := func(what, name string, ok func(span) bool) {
		t.Helper()
		if !slices.ContainsFunc(inTrace[name], ok) {
			t.Errorf("the send's trace %s has no %s (%s); it has %d spans", sendSpan.trace, what, name, len(inTrace))
		}
	}
	step("provider attempt", "delivery.attempt", func(s span) bool { return s.attrs["otpgate.delivery.outcome"] == "sent" })
	step("receipt", tracing.SpanReceipt, func(s span) bool {
		return s.attrs["otpgate.delivery.status"] == "delivered" && s.parent == sendSpan.id
	})
	step("check", tracing.SpanCheck, func(s span) bool {
		return s.attrs["otpgate.check.outcome"] == "approved" && s.parent == sendSpan.id
	})
	// The receipt's and the check's own requests began before the send's context was
	// known: they are traces of their own, linked to the send's.
	for _, name := range []string{"POST /v1/receipts/{kind}/{instance}", "POST /v1/verifications/check"} {
		if len(inTrace[name]) != 0 {
			t.Errorf("%s: the request's own span is in the send's trace; want it in its own, linked", name)
		}
	}
}
