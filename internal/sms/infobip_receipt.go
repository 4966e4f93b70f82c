package sms

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// InfobipCallbackToken is the callbackData otpgate sends a message with, which Infobip
// copies into the message's delivery report: hex HMAC-SHA256 of the message id under the
// instance's webhook secret. Infobip signs nothing it pushes to a per-message notify URL,
// so this token is what proves a report came from Infobip: only Infobip, which got it
// with the message, holds a valid one for that message.
func InfobipCallbackToken(secret []byte, messageID string) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("otpgate infobip delivery report\x00" + messageID))
	return hex.EncodeToString(h.Sum(nil))
}

func (b *Infobip) token(messageID string) string { return InfobipCallbackToken(b.secret, messageID) }

// infobipReports is a delivery report push: one result per message.
type infobipReports struct {
	Results []struct {
		MessageID    string        `json:"messageId"`
		CallbackData string        `json:"callbackData"`
		MessageCount int64         `json:"messageCount"`
		Status       infobipStatus `json:"status"`
		Error        *struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"error"`
		Price *struct {
			PricePerMessage json.Number `json:"pricePerMessage"`
			Currency        string      `json:"currency"`
		} `json:"price"`
	} `json:"results"`
}

// Final status groups of Infobip's reports (PENDING 1 and ACCEPTED 0 are steps).
const (
	infobipUndeliverable = 2
	infobipDelivered     = 3
	infobipExpired       = 4
)

// ReadReceipts implements receipt.BatchReader for the delivery reports Infobip pushes to
// this instance's notify URL, a JSON {"results":[…]} of one or more reports. Every
// result must carry the callbackData token of its messageId (InfobipCallbackToken) or
// the whole push is receipt.ErrBadSignature and changes nothing; a sender without a
// notify URL takes none. Status group DELIVERED settles a send delivered; UNDELIVERABLE,
// EXPIRED and REJECTED undelivered, with the report's error name (or its status name);
// the rest are steps. pricePerMessage × messageCount is what Infobip charged. A body that
// is no report push is *otp.ErrInvalidRequest; a NUL or invalid UTF-8 in an id or error
// is *otp.ErrInvalidText.
func (b *Infobip) ReadReceipts(c receipt.Callback, now time.Time) ([]receipt.Receipt, error) {
	if b.notify == "" {
		return nil, fmt.Errorf("%s: %w: no notify URL was given to Infobip", b.name, receipt.ErrBadSignature)
	}
	var in infobipReports
	if err := json.Unmarshal(c.Body, &in); err != nil {
		return nil, fmt.Errorf("%s: %w: not a delivery report push", b.name, receipt.ErrBadSignature)
	}
	for _, r := range in.Results {
		if !hmac.Equal([]byte(r.CallbackData), []byte(b.token(r.MessageID))) {
			return nil, fmt.Errorf("%s: %w: a result's callbackData is not its message's token", b.name, receipt.ErrBadSignature)
		}
	}
	if !utf8.Valid(c.Body) {
		return nil, &otp.ErrInvalidText{Field: "body", Problem: "must be valid UTF-8"}
	}
	if len(in.Results) == 0 {
		return nil, &otp.ErrInvalidRequest{Detail: "a delivery report push without results"}
	}
	var out []receipt.Receipt
	for _, r := range in.Results {
		rc := receipt.Receipt{Provider: b.name, ProviderID: r.MessageID, Time: now.UTC()}
		switch r.Status.GroupID {
		case infobipDelivered:
			rc.Status = receipt.DeliveryDelivered
		case infobipUndeliverable, infobipExpired, infobipRejected:
			rc.Status = receipt.DeliveryUndelivered
			rc.Error = r.Status.Name
			if r.Error != nil && r.Error.ID != 0 && r.Error.Name != "" {
				rc.Error = r.Error.Name
			}
		default:
			continue
		}
		if err := errors.Join(otp.CheckText("messageId", rc.ProviderID), otp.CheckText("error.name", rc.Error)); err != nil {
			return nil, err // as sent, before snippet would drop a NUL
		}
		rc.Error = snippet(rc.Error, "")
		if r.Price != nil && r.Price.PricePerMessage != "" {
			rc.Price, rc.PriceIgnored = decimalPrice(r.Price.PricePerMessage.String(), r.Price.Currency, "price")
			rc.Price.Micros *= max(r.MessageCount, 1)
		}
		out = append(out, rc)
	}
	return out, nil
}

// ReadReceipt implements receipt.Reader: the first final state of ReadReceipts, for a
// caller that takes one receipt per callback (receipt.Receipts takes them all).
func (b *Infobip) ReadReceipt(c receipt.Callback, now time.Time) (receipt.Receipt, bool, error) {
	rs, err := b.ReadReceipts(c, now)
	if err != nil || len(rs) == 0 {
		return receipt.Receipt{}, false, err
	}
	return rs[0], true, nil
}
