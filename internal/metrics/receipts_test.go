package metrics

import (
	"context"
	"fmt"
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// refuse answers every callback with err.
type refuse struct{ err error }

func (r refuse) Receive(context.Context, string, receipt.Callback) error { return r.err }

func TestReceiptRefusalsAreCounted(t *testing.T) {
	m := New()
	forged := m.ReceiptReceiver(refuse{fmt.Errorf("sms: %w", receipt.ErrBadSignature)}, "twilio", "webhook")
	if got := counter(t, m, "otpgate_receipts_rejected_total", "kind", "webhook", "reason", "invalid_signature"); got != 0 {
		t.Fatalf("before any callback: got %v, want a series at 0", got)
	}
	for range 3 {
		_ = forged.Receive(context.Background(), "twilio/jp", receipt.Callback{})
	}
	unknown := m.ReceiptReceiver(refuse{fmt.Errorf("otp: receipt: %w", otp.ErrNotFound)})
	_ = unknown.Receive(context.Background(), "webhook/nosuch", receipt.Callback{})
	malformed := m.ReceiptReceiver(refuse{&otp.ErrInvalidRequest{Detail: "no id"}})
	_ = malformed.Receive(context.Background(), "webhook/backup", receipt.Callback{})
	down := m.ReceiptReceiver(refuse{fmt.Errorf("postgres: %w", otp.ErrUnavailable)})
	_ = down.Receive(context.Background(), "webhook/backup", receipt.Callback{})
	genuine := m.ReceiptReceiver(refuse{nil})
	_ = genuine.Receive(context.Background(), "webhook/backup", receipt.Callback{})

	for _, c := range []struct {
		kind, reason string
		want         float64
	}{
		{"twilio", "invalid_signature", 3}, {"webhook", "invalid_signature", 0},
		{"webhook", "unknown_instance", 1}, {"webhook", "invalid_request", 1},
		{"webhook", "unavailable", 0},
	} {
		if got := counter(t, m, "otpgate_receipts_rejected_total", "kind", c.kind, "reason", c.reason); got != c.want {
			t.Errorf("%s %s: got %v, want %v", c.kind, c.reason, got, c.want)
		}
	}
}
