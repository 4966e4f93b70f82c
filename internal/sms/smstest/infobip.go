package smstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
)

// InfobipRequest is one message the fake Infobip accepted, as POST /sms/3/messages had it.
type InfobipRequest struct {
	// MessageID is the id it answered with: the one the request gave, or one of its own.
	MessageID string
	// To is the destination as sent: international format without "+".
	To, Sender, Text string
	// NotifyURL, IntermediateReport, ContentType and CallbackData are the message's
	// delivery webhook settings.
	NotifyURL          string
	IntermediateReport bool
	ContentType        string
	CallbackData       string
	Authorization      string
	// Code is the first run of 4 to 10 digits of Text.
	Code string
}

// Infobip is a fake of Infobip's SMS API (POST /sms/3/messages) for one account. Like
// Infobip it refuses a wrong API key (401, errorCode E401) and takes a destination that
// is no valid international number with status REJECTED_INVALID_DESTINATION (group 5),
// both counted in Refused; a request of another shape (path, content type, unknown or
// missing fields, not one message to one destination) is counted as bad, and a test
// fails on any.
type Infobip struct {
	vendorFake[InfobipRequest]

	APIKey string

	seq int
}

// StartInfobip starts a fake Infobip account on a free loopback port.
func StartInfobip(apiKey string) (*Infobip, error) {
	if apiKey == "" {
		return nil, errors.New("smstest: infobip needs an API key")
	}
	f := &Infobip{APIKey: apiKey}
	if err := f.start(http.HandlerFunc(f.serve)); err != nil {
		return nil, err
	}
	return f, nil
}

// NewInfobip starts a fake Infobip for one test; at cleanup it is closed, and the test
// fails if it got a malformed request.
func NewInfobip(tb TB, apiKey string) *Infobip {
	tb.Helper()
	f, err := StartInfobip(apiKey)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	stopAtCleanup(tb, "Infobip", f)
	return f
}

// international is a number as Infobip takes it: country code first, no "+".
var international = regexp.MustCompile(`^[1-9][0-9]{6,14}$`)

type infobipIn struct {
	Messages []struct {
		Sender       string `json:"sender"`
		Destinations []struct {
			To        string `json:"to"`
			MessageID string `json:"messageId"`
		} `json:"destinations"`
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
		Webhooks *struct {
			Delivery struct {
				URL                string `json:"url"`
				IntermediateReport bool   `json:"intermediateReport"`
				Notify             *bool  `json:"notify"`
			} `json:"delivery"`
			ContentType  string `json:"contentType"`
			CallbackData string `json:"callbackData"`
		} `json:"webhooks"`
	} `json:"messages"`
}

func (f *Infobip) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/sms/3/messages" || r.URL.RawQuery != "" {
		f.malformed(w, http.StatusNotFound, fmt.Errorf("%s %s: no such resource", r.Method, r.URL))
		return
	}
	if r.Header.Get("Authorization") != "App "+f.APIKey {
		f.note("E401")
		writeInfobipError(w, http.StatusUnauthorized, "E401", "Invalid login details")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.malformed(w, http.StatusUnsupportedMediaType, fmt.Errorf("content type %q", ct))
		return
	}
	var in infobipIn
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || dec.More() {
		f.malformed(w, http.StatusBadRequest, fmt.Errorf("body: %v", err))
		return
	}
	if len(in.Messages) != 1 || len(in.Messages[0].Destinations) != 1 || in.Messages[0].Content.Text == "" {
		f.malformed(w, http.StatusBadRequest, errors.New("want one message with text to one destination"))
		return
	}
	m, d := in.Messages[0], in.Messages[0].Destinations[0]
	req := InfobipRequest{MessageID: d.MessageID, To: d.To, Sender: m.Sender, Text: m.Content.Text,
		Authorization: r.Header.Get("Authorization"), Code: firstCode(m.Content.Text)}
	if wh := m.Webhooks; wh != nil {
		if !isAbsoluteURL(wh.Delivery.URL) || (wh.ContentType != "application/json" && wh.ContentType != "application/xml") || len(wh.CallbackData) > 4000 {
			f.malformed(w, http.StatusBadRequest, fmt.Errorf("webhooks: url %q, contentType %q, %d bytes of callbackData", wh.Delivery.URL, wh.ContentType, len(wh.CallbackData)))
			return
		}
		req.NotifyURL, req.IntermediateReport, req.ContentType, req.CallbackData = wh.Delivery.URL, wh.Delivery.IntermediateReport, wh.ContentType, wh.CallbackData
	}
	f.mu.Lock()
	reply := f.reply
	f.seq++
	seq := f.seq
	if req.MessageID == "" {
		req.MessageID = fmt.Sprintf("2250be2d4219-3af1-78856-aabe-%012x", seq)
	}
	valid := international.MatchString(req.To)
	ok := valid && (reply.Hang || reply.Status == 0 || reply.Status/100 == 2)
	if ok {
		f.got = append(f.got, req)
	}
	if !valid {
		f.refused = append(f.refused, "REJECTED_INVALID_DESTINATION")
	}
	f.mu.Unlock()
	if !wait(r.Context(), f.release, reply) {
		return
	}
	if valid && !ok {
		writeInfobipError(w, reply.Status, fmt.Sprintf("E%d", reply.Status), "told to fail")
		return
	}
	status := map[bool]map[string]any{
		true:  {"groupId": 1, "groupName": "PENDING", "id": 26, "name": "PENDING_ACCEPTED", "description": "Message sent to next instance"},
		false: {"groupId": 5, "groupName": "REJECTED", "id": 52, "name": "REJECTED_INVALID_DESTINATION", "description": "Invalid destination address"},
	}[valid]
	code := http.StatusOK
	if reply.Status/100 == 2 {
		code = reply.Status
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"bulkId": fmt.Sprintf("bulk-%d", seq), "messages": []map[string]any{
		{"messageId": req.MessageID, "status": status, "destination": req.To, "details": map[string]int{"messageCount": 1}},
	}})
}

// note records what a well-formed request was refused with.
func (f *Infobip) note(what string) {
	f.mu.Lock()
	f.refused = append(f.refused, what)
	f.mu.Unlock()
}

// malformed counts a request otpgate should never send and answers it as Infobip would.
func (f *Infobip) malformed(w http.ResponseWriter, status int, err error) {
	f.mu.Lock()
	f.bad++
	if f.firstBad == nil {
		f.firstBad = err
	}
	f.mu.Unlock()
	writeInfobipError(w, status, fmt.Sprintf("E%d", status), err.Error())
}

func writeInfobipError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errorCode": code, "description": description,
		"action": "Check the request.", "violations": []any{}, "resources": []any{}})
}

// Report is the body of a delivery report push for accepted messages, each with the
// status group and name given (3 DELIVERED_TO_HANDSET, 2 UNDELIVERABLE_NOT_DELIVERED…)
// and the callbackData its message was sent with.
func (f *Infobip) Report(status int, name string, messageIDs ...string) ([]byte, error) {
	groups := map[int]string{1: "PENDING", 2: "UNDELIVERABLE", 3: "DELIVERED", 4: "EXPIRED", 5: "REJECTED"}
	statusIDs := map[string]int{"PENDING_ENROUTE": 7, "UNDELIVERABLE_NOT_DELIVERED": 9, "DELIVERED_TO_HANDSET": 5, "DELIVERED_TO_OPERATOR": 2, "EXPIRED_EXPIRED": 15}
	var results []map[string]any
	for _, id := range messageIDs {
		req, ok := f.find(id)
		if !ok {
			return nil, fmt.Errorf("smstest: infobip has no message %s", id)
		}
		e := map[string]any{"groupId": 0, "groupName": "OK", "id": 0, "name": "NO_ERROR", "permanent": false}
		if status != 3 && status != 1 {
			e = map[string]any{"groupId": 1, "groupName": "HANDSET_ERRORS", "id": 27, "name": "EC_ABSENT_SUBSCRIBER", "permanent": false}
		}
		results = append(results, map[string]any{
			"bulkId": "bulk", "messageId": id, "to": req.To, "sender": req.Sender,
			"sentAt": "2026-03-14T06:09:27.000+0000", "doneAt": "2026-03-14T06:09:29.000+0000", "messageCount": 1,
			"price":        map[string]any{"pricePerMessage": 0.0125, "currency": "EUR"},
			"status":       map[string]any{"groupId": status, "groupName": groups[status], "id": statusIDs[name], "name": name},
			"error":        e,
			"callbackData": req.CallbackData,
		})
	}
	return json.Marshal(map[string]any{"results": results})
}

// Callback pushes a delivery report for accepted messages to the notify URL the first
// named and returns the status otpgate answered.
func (f *Infobip) Callback(ctx context.Context, status int, name string, messageIDs ...string) (int, error) {
	req, ok := f.find(messageIDs[0])
	if !ok || req.NotifyURL == "" {
		return 0, fmt.Errorf("smstest: infobip has no message %s with a notify URL", messageIDs[0])
	}
	body, err := f.Report(status, name, messageIDs...)
	if err != nil {
		return 0, err
	}
	return post(ctx, req.NotifyURL, http.Header{"Content-Type": {"application/json"}}, body)
}

func (f *Infobip) find(id string) (InfobipRequest, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.got {
		if r.MessageID == id {
			return r, true
		}
	}
	return InfobipRequest{}, false
}
