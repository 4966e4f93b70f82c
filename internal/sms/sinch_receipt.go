package sms

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// Sinch's callback signature headers (HMAC, turned on per service plan by Sinch).
const (
	SinchSignatureHeader = "X-Sinch-Webhook-Signature"
	SinchNonceHeader     = "X-Sinch-Webhook-Signature-Nonce"
	SinchTimestampHeader = "X-Sinch-Webhook-Signature-Timestamp"
	SinchAlgorithmHeader = "X-Sinch-Webhook-Signature-Algorithm"
)

// SinchAlgorithm is the one signature algorithm Sinch names.
const SinchAlgorithm = "HmacSHA256"

// SinchSignature is what Sinch puts in X-Sinch-Webhook-Signature: base64(HMAC-SHA256(secret,
// the raw body, ".", the nonce, ".", the timestamp)).
func SinchSignature(secret string, body []byte, nonce, timestamp string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	mac.Write([]byte("." + nonce + "." + timestamp))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// sinchTime reads a signature timestamp: Unix seconds, or an RFC 3339 time.
func sinchTime(s string) (time.Time, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// verify checks a callback's signature and its age.
func (s *Sinch) verify(c receipt.Callback, now time.Time) error {
	h := c.Header
	nonce, ts := h.Get(SinchNonceHeader), h.Get(SinchTimestampHeader)
	got, err := base64.StdEncoding.DecodeString(h.Get(SinchSignatureHeader))
	want, _ := base64.StdEncoding.DecodeString(SinchSignature(s.secret, c.Body, nonce, ts))
	at, dated := sinchTime(ts)
	switch {
	case s.secret == "" || s.callback == "":
		return errors.New("this instance asks for no delivery reports")
	case h.Get(SinchSignatureHeader) == "" || nonce == "" || err != nil || !hmac.Equal(got, want):
		return errors.New("signature missing or wrong")
	case h.Get(SinchAlgorithmHeader) != "" && h.Get(SinchAlgorithmHeader) != SinchAlgorithm:
		return fmt.Errorf("algorithm %q", snippet(h.Get(SinchAlgorithmHeader), ""))
	case !dated || now.Sub(at).Abs() > DefaultTolerance:
		return errors.New("timestamp missing or too far from now")
	}
	return nil
}

// sinchReport is the part of a delivery report callback otpgate reads.
type sinchReport struct {
	Type    string `json:"type"`
	BatchID string `json:"batch_id"`
	Status  string `json:"status"`
	Code    int    `json:"code"`
}

// Final states in Sinch's delivery reports, in lower case. Queued and Dispatched are
// steps; Unknown (the operator sent no receipt Sinch could read) settles nothing either.
var (
	sinchDelivered   = map[string]bool{"delivered": true}
	sinchUndelivered = map[string]bool{"aborted": true, "cancelled": true, "rejected": true, "deleted": true, "failed": true, "expired": true}
)

// ReadReceipt implements receipt.Reader for this service plan's delivery reports: JSON,
// signed with the HMAC secret over the raw body, the nonce and the timestamp, which must
// be within DefaultTolerance of now. A sender without a callback accepts none. A signed
// body that is not JSON is *otp.ErrInvalidRequest; one with a NUL or invalid UTF-8 is
// *otp.ErrInvalidText. A recipient report (type recipient_delivery_report_sms) names the
// send by batch_id; status Delivered marks it delivered, Aborted, Cancelled, Rejected,
// Deleted, Failed and Expired undelivered with the report's code; other reports and
// statuses change nothing.
func (s *Sinch) ReadReceipt(c receipt.Callback, now time.Time) (receipt.Receipt, bool, error) {
	if err := s.verify(c, now); err != nil {
		return receipt.Receipt{}, false, fmt.Errorf("%s: %w: %v", s.name, receipt.ErrBadSignature, err)
	}
	if !utf8.Valid(c.Body) {
		// encoding/json would replace the bad bytes and read another id than was sent.
		return receipt.Receipt{}, false, &otp.ErrInvalidText{Field: "body", Problem: "must be valid UTF-8"}
	}
	var in sinchReport
	if err := json.Unmarshal(c.Body, &in); err != nil {
		return receipt.Receipt{}, false, &otp.ErrInvalidRequest{Detail: "delivery report: " + err.Error()}
	}
	if err := errors.Join(otp.CheckText("batch_id", in.BatchID), otp.CheckText("status", in.Status), otp.CheckText("type", in.Type)); err != nil {
		return receipt.Receipt{}, false, err
	}
	status := strings.ToLower(in.Status)
	var rc receipt.Receipt
	switch {
	case in.Type != "recipient_delivery_report_sms" || in.BatchID == "":
		return rc, false, nil
	case sinchDelivered[status]:
		rc.Status = receipt.DeliveryDelivered
	case sinchUndelivered[status]:
		rc.Status = receipt.DeliveryUndelivered
		rc.Error = status
		if in.Code != 0 {
			rc.Error = strconv.Itoa(in.Code)
		}
	default:
		return rc, false, nil
	}
	rc.ProviderID, rc.Provider, rc.Time = in.BatchID, s.name, now.UTC()
	return rc, true, nil
}
