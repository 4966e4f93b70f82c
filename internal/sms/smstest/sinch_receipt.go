package smstest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"otpgate/internal/sms"
)

// Report posts a recipient delivery report for the batch id to the callback_url it
// named, signed as Sinch signs it, and returns the status otpgate answered.
func (f *Sinch) Report(ctx context.Context, id, status string, code int) (int, error) {
	body, callback, err := f.ReportBody(id, status, code)
	if err != nil {
		return 0, err
	}
	return f.PostReport(ctx, callback, body, f.Sign(body, time.Now()))
}

// ReportBody returns a recipient delivery report's JSON as the API reference documents
// it, and the callback_url it goes to, for a test that changes it before posting.
func (f *Sinch) ReportBody(id, status string, code int) ([]byte, string, error) {
	var req *SinchRequest
	f.mu.Lock()
	for i := range f.got {
		if f.got[i].ID == id {
			req = &f.got[i]
		}
	}
	f.mu.Unlock()
	if req == nil || req.CallbackURL == "" {
		return nil, "", fmt.Errorf("smstest: no batch %s with a callback_url", id)
	}
	now := time.Now().UTC()
	body, err := json.Marshal(map[string]any{
		"type": "recipient_delivery_report_sms", "batch_id": id, "recipient": req.To, "code": code, "status": status,
		"at": now.Format(time.RFC3339Nano), "operator_status_at": now.Add(-time.Second).Format(time.RFC3339),
		"client_reference": req.ClientReference, "applied_originator": req.From, "number_of_message_parts": 1, "encoding": "GSM",
	})
	return body, req.CallbackURL, err
}

// Sign returns the headers Sinch signs body with at t: the signature over the body, a
// fresh nonce and t in Unix seconds, and the algorithm.
func (f *Sinch) Sign(body []byte, t time.Time) http.Header {
	nonce, ts := rand.Text(), strconv.FormatInt(t.Unix(), 10)
	h := http.Header{}
	h.Set(sms.SinchSignatureHeader, sms.SinchSignature(f.CallbackSecret, body, nonce, ts))
	h.Set(sms.SinchNonceHeader, nonce)
	h.Set(sms.SinchTimestampHeader, ts)
	h.Set(sms.SinchAlgorithmHeader, sms.SinchAlgorithm)
	return h
}

// PostReport posts body to callback with the headers h, and returns the status otpgate
// answered.
func (f *Sinch) PostReport(ctx context.Context, callback string, body []byte, h http.Header) (int, error) {
	h = h.Clone()
	h.Set("Content-Type", "application/json")
	return post(ctx, callback, h, body)
}
