package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// fakeStore answers BeginSend and Check; the rest of otp.Store is not called.
type fakeStore struct {
	otp.Store
	v otp.Verification
}

func (s *fakeStore) BeginSend(context.Context, otp.BeginSend) (otp.SendStart, error) {
	return otp.SendStart{Verification: s.v, Created: true}, nil
}

func (s *fakeStore) Check(context.Context, otp.CheckRef, func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	return s.v, otp.OutcomeApproved, nil
}

type fakeReceipts struct{ changed bool }

func (r fakeReceipts) MarkDelivery(context.Context, receipt.Receipt) (receipt.Marked, error) {
	return receipt.Marked{Settled: r.changed}, nil
}

// fakeTraces keeps traceparents by send id and answers every lookup with stored.
type fakeTraces struct {
	kept   map[string]string
	stored string
}

func (f *fakeTraces) SetSendTrace(_ context.Context, sendID, tp string) error {
	f.kept[sendID] = tp
	return nil
}
func (f *fakeTraces) VerificationTrace(context.Context, string) (string, error) { return f.stored, nil }
func (f *fakeTraces) ReceiptTrace(context.Context, receipt.Receipt) (string, error) {
	return f.stored, nil
}

// endedNamed returns the ended span named name.
func endedNamed(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span %q among %d", name, len(spans))
	return nil
}

func TestJoined(t *testing.T) {
	t.Run("ASampledSendKeepsItsTraceparentAnUnsampledOneNone", func(t *testing.T) {
		tp, _ := recorder(t)
		traces := &fakeTraces{kept: map[string]string{}}
		s := Joined(&fakeStore{v: otp.Verification{ID: "v1"}}, traces, tp)
		ctx, span := Tracer(tp).Start(context.Background(), "request")
		if _, err := s.BeginSend(ctx, otp.BeginSend{SendID: "s1"}); err != nil {
			t.Fatal(err)
		}
		span.End()
		if _, err := s.BeginSend(context.Background(), otp.BeginSend{SendID: "s2"}); err != nil {
			t.Fatal(err)
		}
		want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
		if got := traces.kept["s1"]; got != want {
			t.Errorf("sampled send: kept %q, want %q", got, want)
		}
		if got, ok := traces.kept["s2"]; ok {
			t.Errorf("send outside a trace: kept %q, want nothing", got)
		}
	})

	t.Run("ACheckIsAChildOfTheStoredSpanLinkedBothWays", func(t *testing.T) {
		tp, rec := recorder(t)
		s := Joined(&fakeStore{v: otp.Verification{ID: "v1"}}, &fakeTraces{stored: parent}, tp)
		ctx, request := Tracer(tp).Start(context.Background(), "POST /v1/verifications/check")
		if _, _, err := s.Check(ctx, otp.CheckRef{ID: "v1"}, nil); err != nil {
			t.Fatal(err)
		}
		request.End()
		check := endedNamed(t, rec.Ended(), SpanCheck)
		if got := check.SpanContext().TraceID().String(); got != "0af7651916cd43dd8448eb211c80319c" {
			t.Errorf("trace: got %s, want the stored one", got)
		}
		if got := check.Parent().SpanID().String(); got != "b7ad6b7169203331" {
			t.Errorf("parent: got %s, want the stored span", got)
		}
		if v, _ := attr(check, "otpgate.check.outcome"); v.AsString() != "approved" {
			t.Errorf("outcome: got %q", v.AsString())
		}
		if l := check.Links(); len(l) != 1 || l[0].SpanContext.SpanID() != request.SpanContext().SpanID() {
			t.Errorf("the check's links: got %+v, want the request's span", l)
		}
		req := endedNamed(t, rec.Ended(), "POST /v1/verifications/check")
		if l := req.Links(); len(l) != 1 || l[0].SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
			t.Errorf("the request's links: got %+v, want the send's span", l)
		}
	})

	t.Run("AReceiptThatChangesItsSendJoinsOneThatDoesNotRecordsNothing", func(t *testing.T) {
		tp, rec := recorder(t)
		traces := &fakeTraces{stored: parent}
		ctx := context.Background()
		if _, err := Receipts(fakeReceipts{changed: false}, traces, tp).MarkDelivery(ctx, receipt.Receipt{}); err != nil {
			t.Fatal(err)
		}
		if n := len(rec.Ended()); n != 0 {
			t.Fatalf("a receipt that changed nothing: got %d spans, want none", n)
		}
		if _, err := Receipts(fakeReceipts{changed: true}, traces, tp).MarkDelivery(ctx, receipt.Receipt{Provider: "p", Status: receipt.DeliveryDelivered}); err != nil {
			t.Fatal(err)
		}
		r := endedNamed(t, rec.Ended(), SpanReceipt)
		if r.SpanContext().TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || r.Parent().SpanID().String() != "b7ad6b7169203331" {
			t.Errorf("receipt span: got trace %s parent %s, want the stored span's child", r.SpanContext().TraceID(), r.Parent().SpanID())
		}
	})

	t.Run("NoStoredContextNoSpan", func(t *testing.T) {
		tp, rec := recorder(t)
		s := Joined(&fakeStore{v: otp.Verification{ID: "v1"}}, &fakeTraces{stored: "garbage"}, tp)
		if _, _, err := s.Check(context.Background(), otp.CheckRef{ID: "v1"}, nil); err != nil {
			t.Fatal(err)
		}
		if n := len(rec.Ended()); n != 0 {
			t.Errorf("got %d spans, want none", n)
		}
	})

	t.Run("OffReturnsTheStoresThemselves", func(t *testing.T) {
		st, rs := &fakeStore{}, fakeReceipts{}
		traces := &fakeTraces{}
		if Joined(st, traces, noop.NewTracerProvider()) != otp.Store(st) || Joined(st, traces, nil) != otp.Store(st) {
			t.Error("Joined with tracing off wraps the store")
		}
		if Receipts(rs, traces, noop.NewTracerProvider()) != receipt.Store(rs) {
			t.Error("Receipts with tracing off wraps the store")
		}
		tp, _ := recorder(t)
		if Joined(st, nil, tp) != otp.Store(st) {
			t.Error("Joined without a trace store wraps the store")
		}
	})
}
