package sms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"otpgate/internal/otp"
)

// webhookReceipt is the JSON a webhook receiver posts back about a message.
type webhookReceipt struct {
	// ID is the "id" otpgate posted the message with.
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// ReceiptHandler receives delivery receipts from the webhook receiver: a POST of
// {"id","status","error"} (id as otpgate sent it, status delivered or undelivered),
// signed with Otpgate-Signature and the webhook secret like the messages themselves. A
// bad or stale signature (older than DefaultTolerance) is 403 and changes nothing; a
// replay within the tolerance finds the send settled and changes nothing either. A
// genuine receipt is 204, whether or not it changed the send.
func (w *Webhook) ReceiptHandler(store otp.ReceiptStore, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			rw.Header().Set("Allow", http.MethodPost)
			http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxCallback))
		if err != nil {
			http.Error(rw, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := VerifySignature(w.secret, r.Header.Get(SignatureHeader), body, w.Now(), DefaultTolerance); err != nil {
			log.Warn("webhook receipt refused", "provider", w.name, "err", err)
			http.Error(rw, "bad signature", http.StatusForbidden)
			return
		}
		rc, err := parseWebhookReceipt(body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		rc.Provider, rc.Time = w.name, w.Now().UTC()
		if _, err := store.MarkDelivery(r.Context(), rc); err != nil {
			log.Error("recording a delivery receipt failed", "provider", w.name, "err", err)
			http.Error(rw, "receipt not recorded", http.StatusServiceUnavailable)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	})
}

// errBadReceipt is a receipt body that is not what the receipt contract says.
var errBadReceipt = errors.New("bad receipt")

// parseWebhookReceipt decodes a receipt strictly.
func parseWebhookReceipt(body []byte) (otp.Receipt, error) {
	var in webhookReceipt
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return otp.Receipt{}, fmt.Errorf("%w: %v", errBadReceipt, err)
	}
	if dec.More() {
		return otp.Receipt{}, fmt.Errorf("%w: trailing data", errBadReceipt)
	}
	if in.ID == "" {
		return otp.Receipt{}, fmt.Errorf("%w: id is required", errBadReceipt)
	}
	if in.Status != otp.DeliveryDelivered && in.Status != otp.DeliveryUndelivered {
		return otp.Receipt{}, fmt.Errorf("%w: status must be %q or %q", errBadReceipt, otp.DeliveryDelivered, otp.DeliveryUndelivered)
	}
	if len(in.Error) > 500 {
		return otp.Receipt{}, errors.Join(errBadReceipt, errors.New("error is longer than 500 bytes"))
	}
	return otp.Receipt{SendID: in.ID, Status: in.Status, Error: snippet(in.Error, "")}, nil
}
