package metrics

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// Reasons of otpgate_receipts_rejected_total, by the refusal's code.
var rejectReasons = map[otp.Code]string{
	otp.CodeInvalidSignature: "invalid_signature",
	otp.CodeNotFound:         "unknown_instance",
	otp.CodeInvalidRequest:   "invalid_request",
}

// ReceiptReceiver wraps next so that every callback it refuses is counted by the kind of
// the source it names and the reason: forged or stale signatures, instances that take
// none, bodies that break the callback's contract. The kinds given start at zero for
// forged callbacks, so an alert on them works before the first. Every wrapper of one
// Metrics shares the counter.
func (m *Metrics) ReceiptReceiver(next receipt.Receiver, kinds ...string) receipt.Receiver {
	m.rejectedOnce.Do(func() {
		m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_receipts_rejected_total",
			Help: "Delivery callbacks refused, by provider kind and reason (invalid_signature, unknown_instance, invalid_request).",
		}, []string{"kind", "reason"})
		m.reg.MustRegister(m.rejected)
	})
	for _, k := range kinds {
		m.rejected.WithLabelValues(k, rejectReasons[otp.CodeInvalidSignature])
	}
	return receiptReceiver{next, m.rejected}
}

type receiptReceiver struct {
	next     receipt.Receiver
	rejected *prometheus.CounterVec
}

func (r receiptReceiver) Receive(ctx context.Context, source string, c receipt.Callback) error {
	err := r.next.Receive(ctx, source, c)
	if err != nil {
		if reason, ok := rejectReasons[otp.ErrorCode(err)]; ok {
			kind, _, _ := strings.Cut(source, "/")
			r.rejected.WithLabelValues(kind, reason).Inc()
		}
	}
	return err
}
