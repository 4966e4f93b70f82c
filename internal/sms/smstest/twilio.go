package smstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"otpgate/internal/sms"
)

// TwilioRequest is one message or call the fake Twilio accepted.
type TwilioRequest struct {
	// SID is the id it answered with: SM… for a message, CA… for a call.
	SID string
	// Channel is sms, whatsapp or voice.
	Channel  string
	To, From string
	// Body is the message's text, or for a call the text its TwiML says.
	Body string
	// ContentSID and Variables are a WhatsApp content template and its variables.
	ContentSID string
	Variables  map[string]string
	// Language and Voice are the call's <Say> attributes.
	Language, Voice string
	StatusCallback  string
	// Code is the code as the user would get it: the first 4 to 10 digit run of the text,
	// the digits a call spells out, or content variable 1.
	Code string
}

// Twilio is a fake of Twilio's Messages and Calls API for one account. It checks each
// request as Twilio would (basic auth, required parameters, whatsapp: addresses, TwiML
// that parses) and counts the ones it refuses as bad; a test fails on any.
type Twilio struct {
	vendorFake[TwilioRequest]

	AccountSID string
	AuthToken  string

	seq int
}

// StartTwilio starts a fake Twilio account on a free loopback port.
func StartTwilio(accountSID, authToken string) (*Twilio, error) {
	if accountSID == "" || authToken == "" {
		return nil, errors.New("smstest: twilio needs an account SID and an auth token")
	}
	f := &Twilio{AccountSID: accountSID, AuthToken: authToken}
	if err := f.start(http.HandlerFunc(f.serve)); err != nil {
		return nil, err
	}
	return f, nil
}

// NewTwilio starts a fake Twilio for one test; at cleanup it is closed, and the test
// fails if it refused any request as malformed.
func NewTwilio(tb TB, accountSID, authToken string) *Twilio {
	tb.Helper()
	f, err := StartTwilio(accountSID, authToken)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	stopAtCleanup(tb, "Twilio", f)
	return f
}

var (
	twilioPath = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/(Messages|Calls)\.json$`)
	spelled    = regexp.MustCompile(`\d(?:[,、]\s*\d){3,9}`)
	nonDigit   = regexp.MustCompile(`\D`)
)

func (f *Twilio) serve(w http.ResponseWriter, r *http.Request) {
	m := twilioPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		f.refuse(w, http.StatusNotFound, 20404, fmt.Errorf("%s %s: no such resource", r.Method, r.URL.Path))
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != f.AccountSID || pass != f.AuthToken || m[1] != f.AccountSID {
		f.refuse(w, http.StatusUnauthorized, 20003, errors.New("authenticate: wrong account or token"))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.refuse(w, http.StatusBadRequest, 20001, fmt.Errorf("content type %q", ct))
		return
	}
	if err := r.ParseForm(); err != nil {
		f.refuse(w, http.StatusBadRequest, 20001, err)
		return
	}
	var req TwilioRequest
	var err error
	if m[2] == "Calls" {
		req, err = parseCall(r.PostForm)
	} else {
		req, err = parseMessage(r.PostForm)
	}
	if err != nil {
		f.refuse(w, http.StatusBadRequest, 21201, err)
		return
	}
	f.mu.Lock()
	reply := f.reply
	f.seq++
	prefix := "SM"
	if req.Channel == "voice" {
		prefix = "CA"
	}
	req.SID = fmt.Sprintf("%s%032x", prefix, f.seq)
	ok = reply.Hang || reply.Status == 0 || reply.Status/100 == 2
	if ok {
		f.got = append(f.got, req)
	}
	f.mu.Unlock()
	if !f.wait(r.Context(), reply) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"code":%d,"message":"told to fail","status":%d}`, 20000+reply.Status, reply.Status)
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusCreated
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"sid": req.SID, "status": "queued", "to": req.To})
}

// wait delays or holds the reply as told; false means nothing more is to be written.
func (f *Twilio) wait(ctx context.Context, reply Reply) bool {
	if reply.Hang {
		select {
		case <-ctx.Done():
		case <-f.release:
		}
		return false
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-ctx.Done():
			return false
		case <-f.release:
			return false
		}
	}
	return true
}

// refuse counts a bad request and answers it with a Twilio error.
func (f *Twilio) refuse(w http.ResponseWriter, status, code int, err error) {
	f.mu.Lock()
	f.bad++
	if f.firstBad == nil {
		f.firstBad = err
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": err.Error(), "status": status})
}

// Callback posts a status callback for an accepted request to the StatusCallback URL it
// named, signed as Twilio signs it, and returns the status otpgate answered. errorCode
// is sent as ErrorCode when not empty.
func (f *Twilio) Callback(ctx context.Context, sid, status, errorCode string) (int, error) {
	extra := url.Values{}
	if errorCode != "" {
		extra.Set("ErrorCode", errorCode)
	}
	return f.CallbackWith(ctx, sid, status, extra)
}

// CallbackWith is Callback with more parameters, such as Price and PriceUnit, added to
// the form as given (NULs and all) and signed with it.
func (f *Twilio) CallbackWith(ctx context.Context, sid, status string, extra url.Values) (int, error) {
	var req *TwilioRequest
	f.mu.Lock()
	for i := range f.got {
		if f.got[i].SID == sid {
			req = &f.got[i]
		}
	}
	f.mu.Unlock()
	if req == nil || req.StatusCallback == "" {
		return 0, fmt.Errorf("smstest: no request %s with a status callback", sid)
	}
	form := url.Values{"AccountSid": {f.AccountSID}, "To": {req.To}}
	if req.Channel == "voice" {
		form.Set("CallSid", sid)
		form.Set("CallStatus", status)
	} else {
		form.Set("MessageSid", sid)
		form.Set("MessageStatus", status)
	}
	for k, vs := range extra {
		form[k] = vs
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.StatusCallback, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hr.Header.Set(sms.TwilioSignatureHeader, sms.TwilioSignature(f.AuthToken, req.StatusCallback, form))
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
