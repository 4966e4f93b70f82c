package smstest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
)

// PlivoAccount is the fake Plivo account's credentials.
type PlivoAccount struct {
	AuthID, AuthToken string
	// SignV3 adds X-Plivo-Signature-V3 to the callbacks it posts, beside the V2 that
	// messaging's documentation describes.
	SignV3 bool
}

// PlivoRequest is one message the fake Plivo accepted.
type PlivoRequest struct {
	// UUID is the message_uuid it answered with.
	UUID                      string
	Src, Powerpack, Dst, Text string
	Type, CallbackURL, Method string
	// Code is the first run of 4 to 10 digits in Text.
	Code string
}

// Plivo is a fake of Plivo's Message API for one account. It checks each request as the
// API reference describes it (POST /v1/Account/{auth_id}/Message/, basic auth with the
// auth ID and token, a JSON body with src or powerpack_uuid, dst, text) and counts the
// ones it refuses as bad; a test fails on any. It answers as Plivo does: 202 with the
// message_uuid, or an error status with {"api_id","error"}.
type Plivo struct {
	vendorFake[PlivoRequest]

	PlivoAccount
}

// StartPlivo starts a fake Plivo account on a free loopback port.
func StartPlivo(a PlivoAccount) (*Plivo, error) {
	if a.AuthID == "" || a.AuthToken == "" {
		return nil, errors.New("smstest: plivo needs an auth ID and token")
	}
	f := &Plivo{PlivoAccount: a}
	if err := f.start(http.HandlerFunc(f.serve)); err != nil {
		return nil, err
	}
	return f, nil
}

// NewPlivo starts a fake Plivo for one test; at cleanup it is closed, and the test fails
// if it refused any request as malformed.
func NewPlivo(tb TB, a PlivoAccount) *Plivo {
	tb.Helper()
	f, err := StartPlivo(a)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	stopAtCleanup(tb, "Plivo", f)
	return f
}

var (
	plivoPath = regexp.MustCompile(`^/v1/Account/([^/]+)/Message/$`)
	plivoDst  = regexp.MustCompile(`^[1-9]\d{6,14}$`)
)

// plivoBody is the part of the Message API's arguments a text message may use.
type plivoBody struct {
	Src           string `json:"src"`
	PowerpackUUID string `json:"powerpack_uuid"`
	Dst           string `json:"dst"`
	Text          string `json:"text"`
	Type          string `json:"type"`
	URL           string `json:"url"`
	Method        string `json:"method"`
	Log           any    `json:"log"`
	Trackable     bool   `json:"trackable"`
	MessageExpiry int    `json:"message_expiry"`
}

func (f *Plivo) serve(w http.ResponseWriter, r *http.Request) {
	m := plivoPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		f.refuse(w, http.StatusNotFound, fmt.Errorf("%s %s: no such resource", r.Method, r.URL.Path))
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != f.AuthID || pass != f.AuthToken || m[1] != f.AuthID {
		f.refuse(w, http.StatusUnauthorized, errors.New("authentication failed"))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.refuse(w, http.StatusBadRequest, fmt.Errorf("content type %q", ct))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, err := parsePlivo(raw)
	if err != nil {
		f.refuse(w, http.StatusBadRequest, err)
		return
	}
	req.UUID = rand.Text()
	f.mu.Lock()
	reply := f.reply
	ok = reply.Hang || reply.Status == 0 || reply.Status/100 == 2
	if ok {
		f.got = append(f.got, req)
	}
	f.mu.Unlock()
	if !wait(r.Context(), f.release, reply) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(reply.Status)
		_ = json.NewEncoder(w).Encode(map[string]string{"api_id": rand.Text(), "error": "told to fail"})
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusAccepted
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"api_id": rand.Text(), "message": "message(s) queued", "message_uuid": []string{req.UUID}})
}

// parsePlivo checks a message's body as the API reference describes it.
func parsePlivo(raw []byte) (PlivoRequest, error) {
	var b plivoBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return PlivoRequest{}, fmt.Errorf("body: %w", err)
	}
	req := PlivoRequest{Src: b.Src, Powerpack: b.PowerpackUUID, Dst: b.Dst, Text: b.Text, Type: b.Type, CallbackURL: b.URL, Method: b.Method}
	switch {
	case (b.Src == "") == (b.PowerpackUUID == ""):
		return req, errors.New("exactly one of src and powerpack_uuid is required")
	case !plivoDst.MatchString(b.Dst):
		return req, fmt.Errorf("dst %q: a number with its country code, digits only", b.Dst)
	case b.Text == "":
		return req, errors.New("text is required")
	case b.Type != "" && b.Type != "sms":
		return req, fmt.Errorf("type %q: a text message is sms", b.Type)
	case b.Method != "" && b.Method != http.MethodPost && b.Method != http.MethodGet:
		return req, fmt.Errorf("method %q: GET or POST", b.Method)
	}
	if b.URL != "" && !isAbsoluteURL(b.URL) {
		return req, fmt.Errorf("url %q is not an absolute URL", b.URL)
	}
	req.Code = firstCode(b.Text)
	return req, nil
}

// refuse counts a bad request and answers it with Plivo's error body.
func (f *Plivo) refuse(w http.ResponseWriter, status int, err error) {
	f.mu.Lock()
	f.bad++
	if f.firstBad == nil {
		f.firstBad = err
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"api_id": rand.Text(), "error": err.Error()})
}
