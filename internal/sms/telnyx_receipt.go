package sms

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// Telnyx's webhook signature headers: the base64 Ed25519 signature of
// "<timestamp>|<raw body>" made with the account's key, and that Unix timestamp.
const (
	TelnyxSignatureHeader = "Telnyx-Signature-Ed25519"
	TelnyxTimestampHeader = "Telnyx-Timestamp"
)

// TelnyxTolerance is how far a webhook's timestamp may be from otpgate's clock, either
// way; Telnyx's own libraries allow the same five minutes.
const TelnyxTolerance = 5 * time.Minute

// VerifyTelnyxSignature checks a Telnyx webhook: its timestamp within TelnyxTolerance of
// now and its signature by public over "<timestamp>|<body>".
func VerifyTelnyxSignature(public ed25519.PublicKey, signature, timestamp string, body []byte, now time.Time) error {
	if len(public) != ed25519.PublicKeySize {
		return errors.New("no public key to check it with")
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not a Unix time", TelnyxTimestampHeader)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > TelnyxTolerance || d < -TelnyxTolerance {
		return fmt.Errorf("%s is %s from now, more than %s", TelnyxTimestampHeader, d.Round(time.Second), TelnyxTolerance)
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%s is not a base64 Ed25519 signature", TelnyxSignatureHeader)
	}
	signed := make([]byte, 0, len(timestamp)+1+len(body))
	signed = append(append(append(signed, timestamp...), '|'), body...)
	if !ed25519.Verify(public, signed, sig) {
		return errors.New("the signature is not the account's over the timestamp and body")
	}
	return nil
}

// telnyxEvent is the part of a messaging webhook that otpgate reads.
type telnyxEvent struct {
	Data struct {
		RecordType string `json:"record_type"`
		EventType  string `json:"event_type"`
		Payload    struct {
			ID string `json:"id"`
			To []struct {
				Status string `json:"status"`
			} `json:"to"`
			Errors []struct {
				Code  string `json:"code"`
				Title string `json:"title"`
			} `json:"errors"`
			Cost *struct {
				Amount   string `json:"amount"`
				Currency string `json:"currency"`
			} `json:"cost"`
		} `json:"payload"`
	} `json:"data"`
}

// Final states of a Telnyx message's recipient in message.finalized. delivery_unconfirmed
// (the carrier never said) is neither; queued, sending and sent are steps.
var (
	telnyxDelivered   = map[string]bool{"delivered": true}
	telnyxUndelivered = map[string]bool{"sending_failed": true, "delivery_failed": true, "expired": true}
)

// ReadReceipt implements receipt.Reader for this account's messaging webhooks. The
// signature must be the account's Ed25519 signature over the timestamp and the raw body,
// and the timestamp within TelnyxTolerance: otherwise receipt.ErrBadSignature. Only
// message.finalized with a final state settles a send; other events are genuine and
// change nothing. A body that is no Telnyx event is *otp.ErrInvalidRequest; a NUL or
// invalid UTF-8 in what is kept is *otp.ErrInvalidText. A sender without a public key
// accepts no webhook.
func (t *Telnyx) ReadReceipt(c receipt.Callback, now time.Time) (receipt.Receipt, bool, error) {
	if err := VerifyTelnyxSignature(t.public, c.Header.Get(TelnyxSignatureHeader), c.Header.Get(TelnyxTimestampHeader), c.Body, now); err != nil {
		return receipt.Receipt{}, false, fmt.Errorf("%s: %w: %v", t.name, receipt.ErrBadSignature, err)
	}
	if !utf8.Valid(c.Body) {
		return receipt.Receipt{}, false, &otp.ErrInvalidText{Field: "body", Problem: "must be valid UTF-8"}
	}
	var ev telnyxEvent
	if err := json.Unmarshal(c.Body, &ev); err != nil {
		return receipt.Receipt{}, false, &otp.ErrInvalidRequest{Detail: "not a Telnyx webhook: " + err.Error()}
	}
	d := ev.Data
	if d.RecordType != "event" || d.EventType != "message.finalized" {
		return receipt.Receipt{}, false, nil
	}
	p := d.Payload
	if p.ID == "" || len(p.To) == 0 {
		return receipt.Receipt{}, false, &otp.ErrInvalidRequest{Detail: "message.finalized without the message's id and recipient"}
	}
	rc := receipt.Receipt{Provider: t.name, ProviderID: p.ID, Time: now.UTC()}
	status := p.To[0].Status
	switch {
	case telnyxDelivered[status]:
		rc.Status = receipt.DeliveryDelivered
	case telnyxUndelivered[status]:
		rc.Status = receipt.DeliveryUndelivered
		rc.Error = status
		if len(p.Errors) > 0 && p.Errors[0].Code != "" {
			rc.Error = p.Errors[0].Code
		}
	default:
		return receipt.Receipt{}, false, nil
	}
	if err := errors.Join(otp.CheckText("id", rc.ProviderID), otp.CheckText("errors.code", rc.Error)); err != nil {
		return receipt.Receipt{}, false, err // as sent, before snippet would drop a NUL
	}
	rc.Error = snippet(rc.Error, "")
	if p.Cost != nil && p.Cost.Amount != "" {
		rc.Price, rc.PriceIgnored = decimalPrice(p.Cost.Amount, p.Cost.Currency, "cost")
	}
	return rc, true, nil
}

// decimalPrice reads a charge given as a decimal string and an ISO 4217 code, as Telnyx's
// cost and Infobip's price are; field names them in the reason an unreadable one is
// ignored for.
func decimalPrice(amount, currency, field string) (receipt.Price, string) {
	m, ok := micros(amount)
	switch {
	case !ok:
		return receipt.Price{}, field + " is not a decimal amount"
	case !currencyCode(currency):
		return receipt.Price{}, field + " has no currency code"
	}
	return receipt.Price{Micros: m, Currency: currency}, ""
}
