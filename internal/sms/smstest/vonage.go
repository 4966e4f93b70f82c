package smstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"otpgate/internal/sms"
)

// VonageAccount is the fake Vonage account's credentials.
type VonageAccount struct {
	APIKey, APISecret string
	// SignatureSecret and SignatureMethod sign the delivery receipts it posts; the method
	// is one of sms.VonageSignatureMethods (empty: sms.VonageMD5Hash).
	SignatureSecret, SignatureMethod string
	// JSONReceipts posts receipts as JSON (the dashboard's POST-JSON) instead of a form.
	JSONReceipts bool
}

// VonageRequest is one message the fake Vonage accepted.
type VonageRequest struct {
	// IDs are the message ids it answered with, one per part.
	IDs                  []string
	From, To, Text, Type string
	Callback, ClientRef  string
	// Code is the first run of 4 to 10 digits in Text.
	Code string
}

// Vonage is a fake of Vonage's SMS API for one account. It checks each request as the
// API reference describes it (POST /sms/json, a form with api_key and api_secret, from,
// to as 7 to 15 digits, text, type text or unicode) and counts the ones it refuses as
// bad; a test fails on any. It answers as Vonage does: 200 with a status per part.
type Vonage struct {
	vendorFake[VonageRequest]

	VonageAccount

	status string // a non-zero status to answer with, and its error-text
	text   string
	seq    int
}

// StartVonage starts a fake Vonage account on a free loopback port.
func StartVonage(a VonageAccount) (*Vonage, error) {
	if a.APIKey == "" || a.APISecret == "" {
		return nil, errors.New("smstest: vonage needs an API key and secret")
	}
	if a.SignatureMethod == "" {
		a.SignatureMethod = sms.VonageMD5Hash
	}
	f := &Vonage{VonageAccount: a}
	if err := f.start(http.HandlerFunc(f.serve)); err != nil {
		return nil, err
	}
	return f, nil
}

// NewVonage starts a fake Vonage for one test; at cleanup it is closed, and the test
// fails if it refused any request as malformed.
func NewVonage(tb TB, a VonageAccount) *Vonage {
	tb.Helper()
	f, err := StartVonage(a)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	stopAtCleanup(tb, "Vonage", f)
	return f
}

// Refuse makes the fake answer well-formed requests with 200 and a message of this
// non-zero status and error-text, keeping nothing, as Vonage refuses a message; ""
// accepts them again.
func (f *Vonage) Refuse(status, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.text = status, text
}

// vonageParams are the parameters the SMS API reference documents for a message.
var vonageParams = map[string]bool{
	"api_key": true, "api_secret": true, "sig": true, "from": true, "to": true, "text": true, "ttl": true,
	"status-report-req": true, "callback": true, "message-class": true, "type": true, "client-ref": true,
	"account-ref": true, "entity-id": true, "content-id": true,
}

var vonageTo = regexp.MustCompile(`^\d{7,15}$`)

func (f *Vonage) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/sms/json" {
		f.refuse(w, http.StatusNotFound, "", fmt.Errorf("%s %s: no such resource", r.Method, r.URL.Path))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.refuse(w, http.StatusOK, "2", fmt.Errorf("content type %q", ct))
		return
	}
	if err := r.ParseForm(); err != nil || len(r.URL.Query()) != 0 {
		f.refuse(w, http.StatusOK, "2", fmt.Errorf("not a form in the body: %v", err))
		return
	}
	form := r.PostForm
	if form.Get("api_key") != f.APIKey || form.Get("api_secret") != f.APISecret {
		f.refuse(w, http.StatusOK, "4", errors.New("bad credentials"))
		return
	}
	req, err := parseVonage(form)
	if err != nil {
		status := "3" // Invalid Parameters
		if form.Get("from") == "" || form.Get("to") == "" || form.Get("text") == "" {
			status = "2" // Missing Parameters
		}
		f.refuse(w, http.StatusOK, status, err)
		return
	}
	f.mu.Lock()
	reply, status, text := f.reply, f.status, f.text
	ok := reply.Hang || reply.Status == 0 || reply.Status/100 == 2
	if ok && status == "" {
		for range vonageParts(req.Text, req.Type) {
			f.seq++
			req.IDs = append(req.IDs, fmt.Sprintf("%016X", 0x0A00000000000000+f.seq))
		}
		f.got = append(f.got, req)
	}
	f.mu.Unlock()
	if !wait(r.Context(), f.release, reply) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(reply.Status)
		fmt.Fprint(w, `{"title":"told to fail"}`)
		return
	}
	var parts []map[string]string
	if status != "" {
		parts = append(parts, map[string]string{"status": status, "error-text": text})
	}
	for _, id := range req.IDs {
		if status == "" {
			parts = append(parts, map[string]string{"to": req.To, "message-id": id, "status": "0", "remaining-balance": "3.14159265",
				"message-price": "0.03330000", "network": "12345", "client-ref": req.ClientRef})
		}
	}
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(map[string]any{"message-count": strconv.Itoa(len(parts)), "messages": parts})
}

// parseVonage checks a message's form as the API reference describes it.
func parseVonage(form url.Values) (VonageRequest, error) {
	req := VonageRequest{From: form.Get("from"), To: form.Get("to"), Text: form.Get("text"), Type: form.Get("type"),
		Callback: form.Get("callback"), ClientRef: form.Get("client-ref")}
	for name, vs := range form {
		if !vonageParams[name] || len(vs) != 1 {
			return req, fmt.Errorf("parameter %q: not documented, or given %d times", name, len(vs))
		}
	}
	switch {
	case req.From == "" || req.Text == "" || req.To == "":
		return req, errors.New("from, to and text are required")
	case !vonageTo.MatchString(req.To):
		return req, fmt.Errorf("to %q: must be 7 to 15 digits", req.To)
	case req.Type != "" && req.Type != "text" && req.Type != "unicode":
		return req, fmt.Errorf("type %q: a text message is text or unicode", req.Type)
	case req.Type != "unicode" && strings.IndexFunc(req.Text, func(r rune) bool { return r > 0xff }) >= 0:
		return req, errors.New("text has letters GSM-7 lacks, but type is not unicode: they would be lost")
	case len(req.ClientRef) > 40:
		return req, errors.New("client-ref is longer than 40 characters")
	}
	if req.Callback != "" && !isAbsoluteURL(req.Callback) {
		return req, fmt.Errorf("callback %q is not an absolute URL", req.Callback)
	}
	req.Code = firstCode(req.Text)
	return req, nil
}

// vonageParts counts the parts a text goes out in: 160 GSM-7 characters or 70 UTF-16
// units in one, 153 or 67 in each part of a longer one.
func vonageParts(text, typ string) []struct{} {
	n, one, each := len([]rune(text)), 160, 153
	if typ == "unicode" {
		n, one, each = len(utf16.Encode([]rune(text))), 70, 67
	}
	if n <= one {
		return make([]struct{}, 1)
	}
	return make([]struct{}, (n+each-1)/each)
}

// refuse counts a bad request and answers it as Vonage would: a status in a 200 reply,
// or an HTTP status when status is "".
func (f *Vonage) refuse(w http.ResponseWriter, httpStatus int, status string, err error) {
	f.mu.Lock()
	f.bad++
	if f.firstBad == nil {
		f.firstBad = err
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	if status != "" {
		_ = json.NewEncoder(w).Encode(map[string]any{"message-count": "1",
			"messages": []map[string]string{{"status": status, "error-text": err.Error()}}})
	}
}
