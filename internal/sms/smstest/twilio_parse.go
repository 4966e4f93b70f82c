package smstest

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

func parseMessage(form url.Values) (TwilioRequest, error) {
	req := TwilioRequest{Channel: "sms", To: form.Get("To"), From: form.Get("From"), Body: form.Get("Body"),
		ContentSID: form.Get("ContentSid"), StatusCallback: form.Get("StatusCallback")}
	if req.To == "" {
		return req, errors.New("21604: To is required")
	}
	if req.From == "" && form.Get("MessagingServiceSid") == "" {
		return req, errors.New("21603: From or MessagingServiceSid is required")
	}
	if strings.HasPrefix(req.To, "whatsapp:") != strings.HasPrefix(req.From, "whatsapp:") {
		return req, errors.New("63007: To and From must both be whatsapp: addresses or neither")
	}
	if strings.HasPrefix(req.To, "whatsapp:") {
		req.Channel = "whatsapp"
		req.To, req.From = strings.TrimPrefix(req.To, "whatsapp:"), strings.TrimPrefix(req.From, "whatsapp:")
	}
	switch {
	case (req.Body == "") == (req.ContentSID == ""):
		return req, errors.New("21602: exactly one of Body and ContentSid is required")
	case req.ContentSID != "":
		if req.Channel != "whatsapp" || !strings.HasPrefix(req.ContentSID, "HX") {
			return req, errors.New("21656: ContentSid must be an HX… template on a WhatsApp message")
		}
		if err := json.Unmarshal([]byte(form.Get("ContentVariables")), &req.Variables); err != nil {
			return req, fmt.Errorf("21656: ContentVariables: %w", err)
		}
		req.Code = req.Variables["1"]
	default:
		req.Code = firstCode(req.Body)
	}
	return req, nil
}

func parseCall(form url.Values) (TwilioRequest, error) {
	req := TwilioRequest{Channel: "voice", To: form.Get("To"), From: form.Get("From"), StatusCallback: form.Get("StatusCallback")}
	if req.To == "" || req.From == "" {
		return req, errors.New("21201: To and From are required")
	}
	var doc struct {
		XMLName xml.Name `xml:"Response"`
		Say     []struct {
			Language string `xml:"language,attr"`
			Voice    string `xml:"voice,attr"`
			Text     string `xml:",chardata"`
		} `xml:"Say"`
	}
	if err := xml.Unmarshal([]byte(form.Get("Twiml")), &doc); err != nil || len(doc.Say) == 0 {
		return req, fmt.Errorf("12100: Twiml is not a <Response> with a <Say>: %v", err)
	}
	req.Body, req.Language, req.Voice = doc.Say[0].Text, doc.Say[0].Language, doc.Say[0].Voice
	if s := spelled.FindString(req.Body); s != "" {
		req.Code = nonDigit.ReplaceAllString(s, "")
	}
	return req, nil
}

func firstCode(body string) string {
	if c := codeRe.FindStringSubmatch(body); c != nil {
		return c[1]
	}
	return ""
}
