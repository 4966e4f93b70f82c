package smstest

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SNSRequest is one SMS the fake SNS accepted, as the signed Publish request had it.
type SNSRequest struct {
	// MessageID is the id it answered with.
	MessageID            string
	PhoneNumber, Message string
	// Attributes are the message attributes by name (AWS.SNS.SMS.SMSType…), String values.
	Attributes map[string]string
	// AccessKeyID, Region and SessionToken are the signature's credentials and scope.
	AccessKeyID, Region, SessionToken string
	// Code is the first run of 4 to 10 digits of Message.
	Code string
}

// SNS is a fake of Amazon SNS's Query API for one account and region, as far as
// Publish to a phone number goes. It checks each request's SigV4 signature with the
// account's keys and answers as SNS does: a bad signature or an unknown key 403
// (SignatureDoesNotMatch, InvalidClientTokenId) and a PhoneNumber not in E.164 400
// (InvalidParameter), both counted in Refused; another Action or Version, a topic,
// unknown parameters or malformed message attributes are counted as bad, and a test
// fails on any.
type SNS struct {
	vendorFake[SNSRequest]

	Region                       string
	AccessKeyID, SecretAccessKey string

	calls int
	seq   int
}

// StartSNS starts a fake SNS on a free loopback port.
func StartSNS(region, accessKeyID, secretAccessKey string) (*SNS, error) {
	if region == "" || accessKeyID == "" || secretAccessKey == "" {
		return nil, errors.New("smstest: sns needs a region and an access key")
	}
	f := &SNS{Region: region, AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey}
	if err := f.start(http.HandlerFunc(f.serve)); err != nil {
		return nil, err
	}
	return f, nil
}

// NewSNS starts a fake SNS for one test; at cleanup it is closed, and the test fails if
// it got a malformed request.
func NewSNS(tb TB, region, accessKeyID, secretAccessKey string) *SNS {
	tb.Helper()
	f, err := StartSNS(region, accessKeyID, secretAccessKey)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	stopAtCleanup(tb, "SNS", f)
	return f
}

// Calls counts the well-formed, well-signed Publish requests, also those answered with
// an error status or never answered: each may have been an SMS.
func (f *SNS) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// snsErrors are the errors the fake answers a status it is told to with.
var snsErrors = map[int][2]string{
	http.StatusBadRequest:          {"Sender", "InvalidParameter"},
	http.StatusForbidden:           {"Sender", "AuthorizationError"},
	http.StatusTooManyRequests:     {"Sender", "Throttled"},
	http.StatusInternalServerError: {"Receiver", "InternalError"},
	http.StatusServiceUnavailable:  {"Receiver", "ServiceUnavailable"},
}

var attributeParam = regexp.MustCompile(`^MessageAttributes\.entry\.([0-9]+)\.(Name|Value\.DataType|Value\.StringValue)$`)

func (f *SNS) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.URL.RawQuery != "" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		f.malformed(w, fmt.Errorf("%s %s (%s): want a form POSTed to /", r.Method, r.URL, r.Header.Get("Content-Type")))
		return
	}
	claims, code, err := checkSigV4(r, body, time.Now(), func(id string) string {
		if id == f.AccessKeyID {
			return f.SecretAccessKey
		}
		return ""
	})
	if err == nil && (claims.Region != f.Region || claims.Service != "sns") {
		code, err = "SignatureDoesNotMatch", fmt.Errorf("scope %s/%s, want %s/sns", claims.Region, claims.Service, f.Region)
	}
	if err != nil {
		f.refuse(w, http.StatusForbidden, "Sender", code, err.Error())
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		f.malformed(w, err)
		return
	}
	req, err := publishRequest(form)
	if err != nil {
		f.malformed(w, err)
		return
	}
	if !e164.MatchString(req.PhoneNumber) {
		f.refuse(w, http.StatusBadRequest, "Sender", "InvalidParameter", "Invalid parameter: PhoneNumber Reason: "+req.PhoneNumber+" is not valid to publish to")
		return
	}
	req.AccessKeyID, req.Region, req.SessionToken = claims.AccessKeyID, claims.Region, r.Header.Get("X-Amz-Security-Token")
	f.mu.Lock()
	reply := f.reply
	f.seq++
	f.calls++
	req.MessageID = fmt.Sprintf("95df01b4-ee98-5cb9-9903-%012x", f.seq)
	ok := reply.Hang || reply.Status == 0 || reply.Status/100 == 2
	if ok {
		f.got = append(f.got, req)
	}
	f.mu.Unlock()
	if !wait(r.Context(), f.release, reply) {
		return
	}
	if !ok {
		e, known := snsErrors[reply.Status]
		if !known {
			e = [2]string{"Receiver", "InternalError"}
		}
		writeSNSError(w, reply.Status, e[0], e[1], "told to fail")
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>%s</MessageId></PublishResult>`+
		`<ResponseMetadata><RequestId>f187a3c1-376f-11df-8963-01868b7c937a</RequestId></ResponseMetadata></PublishResponse>`, req.MessageID)
}

// publishRequest reads a Publish to a phone number from its form, strictly.
func publishRequest(form url.Values) (SNSRequest, error) {
	req := SNSRequest{PhoneNumber: form.Get("PhoneNumber"), Message: form.Get("Message"), Attributes: map[string]string{}}
	if form.Get("Action") != "Publish" || form.Get("Version") != "2010-03-31" {
		return req, fmt.Errorf("the action is %q, version %q: want Publish, 2010-03-31", form.Get("Action"), form.Get("Version"))
	}
	if req.PhoneNumber == "" || req.Message == "" {
		return req, errors.New("PhoneNumber and Message are required")
	}
	entries := map[string]map[string]string{}
	for k, vs := range form {
		if len(vs) != 1 {
			return req, fmt.Errorf("%s given %d times", k, len(vs))
		}
		switch m := attributeParam.FindStringSubmatch(k); {
		case k == "Action" || k == "Version" || k == "PhoneNumber" || k == "Message":
		case m != nil:
			if entries[m[1]] == nil {
				entries[m[1]] = map[string]string{}
			}
			entries[m[1]][m[2]] = vs[0]
		default:
			return req, fmt.Errorf("parameter %s is not one of a Publish to a phone number", k)
		}
	}
	for i, e := range entries {
		if n, err := strconv.Atoi(i); err != nil || n < 1 || n > len(entries) || e["Name"] == "" || e["Value.DataType"] != "String" {
			return req, fmt.Errorf("message attribute entry %s: %v", i, e)
		}
		req.Attributes[e["Name"]] = e["Value.StringValue"]
	}
	if t := req.Attributes["AWS.SNS.SMS.SMSType"]; t != "" && t != "Transactional" && t != "Promotional" {
		return req, fmt.Errorf("AWS.SNS.SMS.SMSType %q", t)
	}
	req.Code = firstCode(req.Message)
	return req, nil
}

// refuse answers a request SNS would refuse, and notes its code.
func (f *SNS) refuse(w http.ResponseWriter, status int, kind, code, message string) {
	f.mu.Lock()
	f.refused = append(f.refused, code)
	f.mu.Unlock()
	writeSNSError(w, status, kind, code, message)
}

// malformed counts a request otpgate should never send and answers it as SNS would.
func (f *SNS) malformed(w http.ResponseWriter, err error) {
	f.mu.Lock()
	f.bad++
	if f.firstBad == nil {
		f.firstBad = err
	}
	f.mu.Unlock()
	writeSNSError(w, http.StatusBadRequest, "Sender", "InvalidParameter", err.Error())
}

func writeSNSError(w http.ResponseWriter, status int, kind, code, message string) {
	var esc strings.Builder
	_ = xml.EscapeText(&esc, []byte(message))
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error>`+
		`<RequestId>42d59b56-7407-4c4a-be0f-4c88daeea257</RequestId></ErrorResponse>`, kind, code, esc.String())
}
