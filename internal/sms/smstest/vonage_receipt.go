package smstest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"otpgate/internal/sms"
)

// Receipt posts a delivery receipt for the message (part) id to the callback its
// request named, signed as the account signs it, and returns the status otpgate
// answered; errCode is sent as err-code ("0" when empty).
func (f *Vonage) Receipt(ctx context.Context, id, status, errCode string) (int, error) {
	params, callback, err := f.ReceiptParams(id, status, errCode)
	if err != nil {
		return 0, err
	}
	return f.PostReceipt(ctx, callback, params)
}

// ReceiptParams builds, signs and returns a receipt's parameters as Vonage documents
// them, and the callback URL they go to, for a test that changes them before posting.
func (f *Vonage) ReceiptParams(id, status, errCode string) (map[string]string, string, error) {
	var req *VonageRequest
	f.mu.Lock()
	for i := range f.got {
		for _, part := range f.got[i].IDs {
			if part == id {
				req = &f.got[i]
			}
		}
	}
	f.mu.Unlock()
	if req == nil || req.Callback == "" {
		return nil, "", fmt.Errorf("smstest: no message %s with a callback", id)
	}
	if errCode == "" {
		errCode = "0"
	}
	now := time.Now().UTC()
	params := map[string]string{
		"msisdn": req.To, "to": req.From, "network-code": "12345", "messageId": id, "price": "0.03330000",
		"status": status, "scts": now.Format("0601021504"), "err-code": errCode, "api-key": f.APIKey,
		"message-timestamp": now.Format(time.DateTime), "timestamp": strconv.FormatInt(now.Unix(), 10), "nonce": rand.Text(),
	}
	if req.ClientRef != "" {
		params["client-ref"] = req.ClientRef
	}
	params["sig"] = sms.VonageSignature(f.SignatureSecret, f.SignatureMethod, params)
	return params, req.Callback, nil
}

// PostReceipt posts params to callback as this account's receipts go (a form, or JSON),
// and returns the status otpgate answered.
func (f *Vonage) PostReceipt(ctx context.Context, callback string, params map[string]string) (int, error) {
	var body, ct string
	if f.JSONReceipts {
		raw, _ := json.Marshal(params)
		body, ct = string(raw), "application/json"
	} else {
		form := url.Values{}
		for k, v := range params {
			form.Set(k, v)
		}
		body, ct = form.Encode(), "application/x-www-form-urlencoded"
	}
	return post(ctx, callback, http.Header{"Content-Type": {ct}}, []byte(body))
}
