package sms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// webhookReceipt is the JSON a webhook receiver posts back about a message.
type webhookReceipt struct {
	// ID is the "id" otpgate posted the message with.
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// ReadReceipt implements receipt.Reader for the webhook receiver's receipts: a POST
// of {"id","status","error"} (id as otpgate sent the message, status delivered or
// undelivered), signed with Otpgate-Signature and the webhook secret like the messages
// themselves. A bad signature, or one older than DefaultTolerance, is
// receipt.ErrBadSignature; a replay within the tolerance finds the send settled and changes
// nothing. A body that breaks the contract is *otp.ErrInvalidRequest; one with a NUL or
// invalid UTF-8 is *otp.ErrInvalidText.
func (w *Webhook) ReadReceipt(c receipt.Callback, now time.Time) (receipt.Receipt, bool, error) {
	if err := VerifySignature(w.secret, c.Header.Get(SignatureHeader), c.Body, now, DefaultTolerance); err != nil {
		return receipt.Receipt{}, false, fmt.Errorf("%s: %w: %v", w.name, receipt.ErrBadSignature, err)
	}
	if !utf8.Valid(c.Body) {
		// encoding/json would replace the bad bytes and read another id than was sent.
		return receipt.Receipt{}, false, &otp.ErrInvalidText{Field: "body", Problem: "must be valid UTF-8"}
	}
	rc, err := parseWebhookReceipt(c.Body)
	var badText *otp.ErrInvalidText
	if errors.As(err, &badText) {
		return receipt.Receipt{}, false, badText
	}
	if err != nil {
		return receipt.Receipt{}, false, &otp.ErrInvalidRequest{Detail: err.Error()}
	}
	rc.Provider, rc.Time = w.name, now.UTC()
	return rc, true, nil
}

// errBadReceipt is a receipt body that is not what the receipt contract says.
var errBadReceipt = errors.New("bad receipt")

// parseWebhookReceipt decodes a receipt strictly.
func parseWebhookReceipt(body []byte) (receipt.Receipt, error) {
	var in webhookReceipt
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return receipt.Receipt{}, fmt.Errorf("%w: %v", errBadReceipt, err)
	}
	if dec.More() {
		return receipt.Receipt{}, fmt.Errorf("%w: trailing data", errBadReceipt)
	}
	if err := errors.Join(otp.CheckText("id", in.ID), otp.CheckText("error", in.Error)); err != nil {
		return receipt.Receipt{}, err // as sent, before snippet would drop a NUL from the error
	}
	if in.ID == "" {
		return receipt.Receipt{}, fmt.Errorf("%w: id is required", errBadReceipt)
	}
	if in.Status != receipt.DeliveryDelivered && in.Status != receipt.DeliveryUndelivered {
		return receipt.Receipt{}, fmt.Errorf("%w: status must be %q or %q", errBadReceipt, receipt.DeliveryDelivered, receipt.DeliveryUndelivered)
	}
	if len(in.Error) > 500 {
		return receipt.Receipt{}, errors.Join(errBadReceipt, errors.New("error is longer than 500 bytes"))
	}
	return receipt.Receipt{SendID: in.ID, Status: in.Status, Error: snippet(in.Error, "")}, nil
}
