package tracingtest

import (
	"errors"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/storetest/fixture"
	"otpgate/internal/tracing"
)

// Two traceparents of the cases below.
const (
	traceA = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	traceB = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
)

func testTraces(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	traces := func(e *fixture.Env) tracing.TraceStore {
		e.T.Helper()
		ts, ok := e.Store.(tracing.TraceStore)
		if !ok {
			e.T.Fatalf("%T keeps no trace context (tracing.TraceStore)", e.Store)
		}
		return ts
	}
	sent := func(e *fixture.Env, p otp.BeginSend, providerID string) otp.Verification {
		e.T.Helper()
		st := e.Send(p)
		if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID,
			Status: otp.SendSent, ProviderID: providerID, Now: p.Now}); err != nil {
			e.T.Fatalf("FinishSend: %v", err)
		}
		if err := e.Flush(e.Ctx); err != nil {
			e.T.Fatal(err)
		}
		return st.Verification
	}

	t.Run("ASendKeepsItsTraceForItsReceiptAndItsVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ts := traces(e)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		v := sent(e, p, "SM1")
		if err := ts.SetSendTrace(e.Ctx, p.SendID, traceA); err != nil {
			t.Fatalf("SetSendTrace: %v", err)
		}
		resend := fixture.Params("+819012345678", "222222", fixture.Base().Add(time.Minute))
		resend.Seen = &v
		if again := sent(e, resend, "SM2"); again.ID != v.ID {
			t.Fatalf("the resend began verification %s, want %s", again.ID, v.ID)
		}
		if err := ts.SetSendTrace(e.Ctx, resend.SendID, traceB); err != nil {
			t.Fatalf("SetSendTrace of the resend: %v", err)
		}
		for _, c := range []struct {
			what string
			got  func() (string, error)
			want string
		}{
			{"verification (its first send's)", func() (string, error) { return ts.VerificationTrace(e.Ctx, v.ID) }, traceA},
			{"receipt by provider id", func() (string, error) {
				return ts.ReceiptTrace(e.Ctx, receipt.Receipt{Provider: "test", ProviderID: "SM1"})
			}, traceA},
			{"receipt by send id", func() (string, error) {
				return ts.ReceiptTrace(e.Ctx, receipt.Receipt{Provider: "test", SendID: p.SendID})
			}, traceA},
			{"the resend's receipt", func() (string, error) {
				return ts.ReceiptTrace(e.Ctx, receipt.Receipt{Provider: "test", ProviderID: "SM2"})
			}, traceB},
			{"another provider's receipt", func() (string, error) {
				return ts.ReceiptTrace(e.Ctx, receipt.Receipt{Provider: "other", ProviderID: "SM1"})
			}, ""},
			{"an unknown receipt", func() (string, error) {
				return ts.ReceiptTrace(e.Ctx, receipt.Receipt{Provider: "test", ProviderID: "SM9"})
			}, ""},
			{"an unknown verification", func() (string, error) { return ts.VerificationTrace(e.Ctx, fixture.NewID()) }, ""},
			{"a verification id that is no uuid", func() (string, error) { return ts.VerificationTrace(e.Ctx, "x") }, ""},
		} {
			got, err := c.got()
			if err != nil || got != c.want {
				t.Errorf("%s: got %q, %v; want %q", c.what, got, err, c.want)
			}
		}
	})

	t.Run("AnUntracedSendKeepsNone", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ts := traces(e)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		v := sent(e, p, "SM1")
		if got, err := ts.VerificationTrace(e.Ctx, v.ID); err != nil || got != "" {
			t.Errorf("verification: got %q, %v; want none", got, err)
		}
		if got, err := ts.ReceiptTrace(e.Ctx, receipt.Receipt{Provider: "test", ProviderID: "SM1"}); err != nil || got != "" {
			t.Errorf("receipt: got %q, %v; want none", got, err)
		}
		if err := ts.SetSendTrace(e.Ctx, fixture.NewID(), traceA); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("an unknown send: got %v, want not found", err)
		}
	})
}
