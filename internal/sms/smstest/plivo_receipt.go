package smstest

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"time"

	"otpgate/internal/sms"
)

// Receipt posts a status callback for the message uuid to the url its request named,
// signed as Plivo signs it, and returns the status otpgate answered; errorCode is sent
// as ErrorCode when not empty.
func (f *Plivo) Receipt(ctx context.Context, uuid, status, errorCode string) (int, error) {
	form, callback, err := f.ReceiptForm(uuid, status, errorCode)
	if err != nil {
		return 0, err
	}
	return f.PostReceipt(ctx, callback, form, f.Sign(callback, form))
}

// ReceiptForm returns a status callback's parameters as Plivo documents them, and the
// url they go to, for a test that changes them before posting.
func (f *Plivo) ReceiptForm(uuid, status, errorCode string) (url.Values, string, error) {
	var req *PlivoRequest
	f.mu.Lock()
	for i := range f.got {
		if f.got[i].UUID == uuid {
			req = &f.got[i]
		}
	}
	f.mu.Unlock()
	if req == nil || req.CallbackURL == "" {
		return nil, "", fmt.Errorf("smstest: no message %s with a url", uuid)
	}
	now := time.Now().UTC().Format("2006-01-02 15:04:05.000000")
	form := url.Values{
		"MessageUUID": {uuid}, "To": {req.Dst}, "From": {req.Src}, "Type": {"sms"}, "Status": {status},
		"Units": {"1"}, "TotalRate": {"0.00500"}, "TotalAmount": {"0.00500"}, "MCC": {"440"}, "MNC": {"10"},
		"ParentMessageUUID": {uuid}, "PartInfo": {"1 of 1"}, "Sequence": {"1"}, "MessageTime": {now}, "QueuedTime": {now},
		"PowerpackUUID": {req.Powerpack},
	}
	if errorCode != "" {
		form.Set("ErrorCode", errorCode)
	}
	return form, req.CallbackURL, nil
}

// Sign returns the headers Plivo signs a callback of form to callback with: the V2
// signature and its nonce, with the same signature in the main-account header (this
// account is a main account), and the V3 ones when the account says so.
func (f *Plivo) Sign(callback string, form url.Values) http.Header {
	h := http.Header{}
	n, _ := rand.Int(rand.Reader, big.NewInt(1e18))
	nonce := fmt.Sprintf("%020d", n)
	sig := sms.PlivoSignatureV2(f.AuthToken, callback, nonce)
	h.Set(sms.PlivoNonceV2Header, nonce)
	h.Set(sms.PlivoSignatureV2Header, sig)
	h.Set(sms.PlivoSignatureMaV2Header, sig)
	if f.SignV3 {
		sig := sms.PlivoSignatureV3(f.AuthToken, callback, nonce, form)
		h.Set(sms.PlivoNonceV3Header, nonce)
		h.Set(sms.PlivoSignatureV3Header, sig)
		h.Set(sms.PlivoSignatureMaV3Header, sig)
	}
	return h
}

// PostReceipt posts form to callback with the headers h, and returns the status otpgate
// answered.
func (f *Plivo) PostReceipt(ctx context.Context, callback string, form url.Values, h http.Header) (int, error) {
	h = h.Clone()
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	return post(ctx, callback, h, []byte(form.Encode()))
}
