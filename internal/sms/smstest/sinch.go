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
	"strings"
	"time"
)

// SinchPlan is the fake Sinch service plan's credentials.
type SinchPlan struct {
	ServicePlanID, APIToken string
	// CallbackSecret signs the delivery reports it posts (HMAC, as Sinch turns it on).
	CallbackSecret string
}

// SinchRequest is one batch the fake Sinch accepted.
type SinchRequest struct {
	// ID is the batch id it answered with.
	ID                          string
	From, To, Body, Type        string
	DeliveryReport, CallbackURL string
	ClientReference             string
	// Code is the first run of 4 to 10 digits in Body.
	Code string
}

// Sinch is a fake of Sinch's SMS REST API for one service plan. It checks each request
// as the API reference describes it (POST /xms/v1/{service_plan_id}/batches, a bearer
// token, a JSON batch with to as E.164 numbers and a body) and counts the ones it refuses
// as bad; a test fails on any. It answers as Sinch does: 201 with the batch, or an error
// status with {"code","text"}.
type Sinch struct {
	vendorFake[SinchRequest]

	SinchPlan
}

// StartSinch starts a fake Sinch service plan on a free loopback port.
func StartSinch(p SinchPlan) (*Sinch, error) {
	if p.ServicePlanID == "" || p.APIToken == "" {
		return nil, errors.New("smstest: sinch needs a service plan ID and an API token")
	}
	f := &Sinch{SinchPlan: p}
	if err := f.start(http.HandlerFunc(f.serve)); err != nil {
		return nil, err
	}
	return f, nil
}

// NewSinch starts a fake Sinch for one test; at cleanup it is closed, and the test fails
// if it refused any request as malformed.
func NewSinch(tb TB, p SinchPlan) *Sinch {
	tb.Helper()
	f, err := StartSinch(p)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	stopAtCleanup(tb, "Sinch", f)
	return f
}

var sinchPath = regexp.MustCompile(`^/xms/v1/([^/]+)/batches$`)

// sinchBody is the part of a text batch's fields the fake knows.
type sinchBody struct {
	From            string   `json:"from"`
	To              []string `json:"to"`
	Body            string   `json:"body"`
	Type            string   `json:"type"`
	DeliveryReport  string   `json:"delivery_report"`
	CallbackURL     string   `json:"callback_url"`
	ClientReference string   `json:"client_reference"`
	SendAt          string   `json:"send_at"`
	ExpireAt        string   `json:"expire_at"`
	FlashMessage    bool     `json:"flash_message"`
}

func (f *Sinch) serve(w http.ResponseWriter, r *http.Request) {
	m := sinchPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		f.refuse(w, http.StatusNotFound, "not_found", fmt.Errorf("%s %s: no such resource", r.Method, r.URL.Path))
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.APIToken || m[1] != f.ServicePlanID {
		f.refuse(w, http.StatusUnauthorized, "unauthorized", errors.New("wrong service plan or token"))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.refuse(w, http.StatusBadRequest, "syntax_invalid_json", fmt.Errorf("content type %q", ct))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, code, err := parseSinch(raw)
	if err != nil {
		status := http.StatusBadRequest
		if code == "missing_callback_url" {
			status = http.StatusForbidden
		}
		f.refuse(w, status, code, err)
		return
	}
	req.ID = strings.ToUpper(rand.Text())
	f.mu.Lock()
	reply := f.reply
	ok := reply.Hang || reply.Status == 0 || reply.Status/100 == 2
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
		_ = json.NewEncoder(w).Encode(map[string]string{"code": "told_to_fail", "text": "told to fail"})
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusCreated
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"id": req.ID, "to": []string{req.To}, "from": req.From, "canceled": false,
		"body": req.Body, "type": "mt_text", "created_at": now, "modified_at": now, "delivery_report": req.DeliveryReport,
		"callback_url": req.CallbackURL, "client_reference": req.ClientReference})
}

// parseSinch checks a batch as the API reference describes it, returning Sinch's error
// code for one it refuses.
func parseSinch(raw []byte) (SinchRequest, string, error) {
	var b sinchBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return SinchRequest{}, "syntax_invalid_json", fmt.Errorf("body: %w", err)
	}
	req := SinchRequest{From: b.From, Body: b.Body, Type: b.Type, DeliveryReport: b.DeliveryReport,
		CallbackURL: b.CallbackURL, ClientReference: b.ClientReference}
	if len(b.To) == 1 {
		req.To = b.To[0]
	}
	switch {
	case len(b.To) != 1 || b.Body == "":
		return req, "syntax_constraint_violation", errors.New("one recipient in to and a body are wanted")
	case !e164.MatchString(req.To):
		return req, "syntax_invalid_parameter_format", fmt.Errorf("to %q is not an E.164 number", req.To)
	case b.Type != "" && b.Type != "mt_text":
		return req, "syntax_constraint_violation", fmt.Errorf("type %q: a text batch is mt_text", b.Type)
	case b.DeliveryReport != "" && !map[string]bool{"none": true, "summary": true, "full": true, "per_recipient": true, "per_recipient_final": true}[b.DeliveryReport]:
		return req, "syntax_constraint_violation", fmt.Errorf("delivery_report %q", b.DeliveryReport)
	case b.DeliveryReport != "" && b.DeliveryReport != "none" && b.CallbackURL == "":
		return req, "missing_callback_url", errors.New("a delivery report is asked for without callback_url")
	case len(b.ClientReference) > 2048:
		return req, "syntax_constraint_violation", errors.New("client_reference is longer than 2048 characters")
	}
	if b.CallbackURL != "" && !isAbsoluteURL(b.CallbackURL) {
		return req, "syntax_invalid_parameter_format", fmt.Errorf("callback_url %q is not an absolute URL", b.CallbackURL)
	}
	req.Code = firstCode(b.Body)
	return req, "", nil
}

// refuse counts a bad request and answers it with Sinch's error body.
func (f *Sinch) refuse(w http.ResponseWriter, status int, code string, err error) {
	f.mu.Lock()
	f.bad++
	if f.firstBad == nil {
		f.firstBad = err
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "text": err.Error()})
}
