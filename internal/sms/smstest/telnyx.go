package smstest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// TelnyxRequest is one message the fake Telnyx accepted, as POST /v2/messages had it.
type TelnyxRequest struct {
	// ID is the message id it answered with.
	ID                       string
	To, From, Text, Type     string
	MessagingProfileID       string
	WebhookURL               string
	Authorization, UserAgent string
	// Code is the first run of 4 to 10 digits of Text.
	Code string
}

// Telnyx is a fake of Telnyx's Messages API v2 for one account, holding the account's
// Ed25519 key to sign delivery webhooks. Like Telnyx it refuses a wrong API key (401,
// code 10009) and a recipient not in +E.164 (400, code 40310), counted in Refused; a
// request of another shape (path, content type, unknown or missing fields, neither from
// nor messaging_profile_id) is counted as bad, and a test fails on any.
type Telnyx struct {
	vendorFake[TelnyxRequest]

	APIKey string
	// PublicKey is the account's public key in base64, to give otpgate as TELNYX_PUBLIC_KEY.
	PublicKey string

	private ed25519.PrivateKey

	seq int
}

// StartTelnyx starts a fake Telnyx account with a fresh key pair on a free loopback port.
func StartTelnyx(apiKey string) (*Telnyx, error) {
	if apiKey == "" {
		return nil, errors.New("smstest: telnyx needs an API key")
	}
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	f := &Telnyx{APIKey: apiKey, PublicKey: base64.StdEncoding.EncodeToString(public), private: private}
	if err := f.start(http.HandlerFunc(f.serve)); err != nil {
		return nil, err
	}
	return f, nil
}

// NewTelnyx starts a fake Telnyx for one test; at cleanup it is closed, and the test
// fails if it got a malformed request.
func NewTelnyx(tb TB, apiKey string) *Telnyx {
	tb.Helper()
	f, err := StartTelnyx(apiKey)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	stopAtCleanup(tb, "Telnyx", f)
	return f
}

// telnyxErrors are the error bodies the fake answers a status it is told to with, after
// Telnyx's API error codes.
var telnyxErrors = map[int][2]string{
	http.StatusBadRequest:          {"40310", "Invalid 'to' address"},
	http.StatusUnauthorized:        {"10009", "Authentication failed"},
	http.StatusForbidden:           {"10010", "Authorization failed"},
	http.StatusTooManyRequests:     {"10011", "Too many requests"},
	http.StatusInternalServerError: {"10007", "Unexpected error"},
}

func (f *Telnyx) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v2/messages" || r.URL.RawQuery != "" {
		f.malformed(w, http.StatusNotFound, "10005", fmt.Errorf("%s %s: no such resource", r.Method, r.URL))
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.APIKey {
		f.refuse(w, http.StatusUnauthorized, "10009", "Authentication failed")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.malformed(w, http.StatusUnsupportedMediaType, "10014", fmt.Errorf("content type %q", ct))
		return
	}
	var in struct {
		To                 string `json:"to"`
		From               string `json:"from"`
		Text               string `json:"text"`
		Type               string `json:"type"`
		MessagingProfileID string `json:"messaging_profile_id"`
		WebhookURL         string `json:"webhook_url"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || dec.More() {
		f.malformed(w, http.StatusBadRequest, "10015", fmt.Errorf("body: %v", err))
		return
	}
	switch {
	case in.Text == "" || (in.Type != "" && in.Type != "SMS"):
		f.malformed(w, http.StatusBadRequest, "10004", fmt.Errorf("an SMS needs text, got type %q and %d bytes of text", in.Type, len(in.Text)))
		return
	case in.From == "" && in.MessagingProfileID == "":
		f.malformed(w, http.StatusBadRequest, "10004", errors.New("from or messaging_profile_id is required"))
		return
	case in.WebhookURL != "" && !isAbsoluteURL(in.WebhookURL):
		f.malformed(w, http.StatusBadRequest, "10003", fmt.Errorf("webhook_url %q", in.WebhookURL))
		return
	case !e164.MatchString(in.To):
		f.refuse(w, http.StatusBadRequest, "40310", "Invalid 'to' address")
		return
	}
	f.mu.Lock()
	reply := f.reply
	f.seq++
	req := TelnyxRequest{ID: fmt.Sprintf("40385f64-5717-4562-b3fc-%012x", f.seq), To: in.To, From: in.From, Text: in.Text, Type: in.Type,
		MessagingProfileID: in.MessagingProfileID, WebhookURL: in.WebhookURL, Authorization: r.Header.Get("Authorization"),
		UserAgent: r.Header.Get("User-Agent"), Code: firstCode(in.Text)}
	ok := reply.Hang || reply.Status == 0 || reply.Status/100 == 2
	if ok {
		f.got = append(f.got, req)
	}
	f.mu.Unlock()
	if !wait(r.Context(), f.release, reply) {
		return
	}
	if !ok {
		e, known := telnyxErrors[reply.Status]
		if !known {
			e = [2]string{"10007", "Unexpected error"}
		}
		writeTelnyxError(w, reply.Status, e[0], e[1], "told to fail")
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{
		"record_type": "message", "direction": "outbound", "id": req.ID, "type": "SMS",
		"from": map[string]string{"phone_number": req.From}, "messaging_profile_id": req.MessagingProfileID,
		"to":   []map[string]string{{"phone_number": req.To, "status": "queued"}},
		"text": req.Text, "webhook_url": req.WebhookURL, "parts": 1,
	}})
}

// refuse answers a request Telnyx would refuse, and notes its code.
func (f *Telnyx) refuse(w http.ResponseWriter, status int, code, title string) {
	f.mu.Lock()
	f.refused = append(f.refused, code)
	f.mu.Unlock()
	writeTelnyxError(w, status, code, title, "")
}

// malformed counts a request otpgate should never send and answers it as Telnyx would.
func (f *Telnyx) malformed(w http.ResponseWriter, status int, code string, err error) {
	f.mu.Lock()
	f.bad++
	if f.firstBad == nil {
		f.firstBad = err
	}
	f.mu.Unlock()
	writeTelnyxError(w, status, code, "Bad Request", err.Error())
}

func writeTelnyxError(w http.ResponseWriter, status int, code, title, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "title": title, "detail": detail}}})
}

// Event is the body of a message.finalized webhook for an accepted message: its
// recipient's status and, when errorCode is set, the error Telnyx reports with it.
func (f *Telnyx) Event(id, status, errorCode string) ([]byte, error) {
	req, ok := f.find(id)
	if !ok {
		return nil, fmt.Errorf("smstest: telnyx has no message %s", id)
	}
	payload := map[string]any{
		"id": id, "record_type": "message", "direction": "outbound", "type": "SMS", "text": req.Text,
		"from":   map[string]string{"phone_number": req.From},
		"to":     []map[string]string{{"phone_number": req.To, "status": status}},
		"cost":   map[string]string{"amount": "0.0040", "currency": "USD"},
		"errors": []map[string]string{},
	}
	if errorCode != "" {
		payload["errors"] = []map[string]string{{"code": errorCode, "title": "Undeliverable"}}
	}
	return json.Marshal(map[string]any{
		"data": map[string]any{"record_type": "event", "event_type": "message.finalized", "id": "b301ed3f-1490-491f-995f-6e64e69674d4",
			"occurred_at": time.Now().UTC().Format(time.RFC3339Nano), "payload": payload},
		"meta": map[string]any{"attempt": 1, "delivered_to": req.WebhookURL},
	})
}

// Sign returns the headers Telnyx signs body with at t.
func (f *Telnyx) Sign(body []byte, t time.Time) http.Header {
	ts := strconv.FormatInt(t.Unix(), 10)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("telnyx-timestamp", ts)
	h.Set("telnyx-signature-ed25519", base64.StdEncoding.EncodeToString(ed25519.Sign(f.private, append([]byte(ts+"|"), body...))))
	return h
}

// Callback posts a signed message.finalized webhook for an accepted message to the
// webhook_url it named and returns the status otpgate answered.
func (f *Telnyx) Callback(ctx context.Context, id, status, errorCode string) (int, error) {
	req, ok := f.find(id)
	if !ok || req.WebhookURL == "" {
		return 0, fmt.Errorf("smstest: telnyx has no message %s with a webhook_url", id)
	}
	body, err := f.Event(id, status, errorCode)
	if err != nil {
		return 0, err
	}
	return post(ctx, req.WebhookURL, f.Sign(body, time.Now()), body)
}

func (f *Telnyx) find(id string) (TelnyxRequest, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.got {
		if r.ID == id {
			return r, true
		}
	}
	return TelnyxRequest{}, false
}
