// Package templates checks what apps may shape in the messages otpgate sends: their own
// message templates and the data every template runs with, the friendly name a caller
// asks a message to show, the WebOTP domain and the Android app hash. The renderer
// (internal/message) runs the templates; the kernel keeps them in an app's settings. It
// imports nothing of otpgate.
package templates

import (
	"bytes"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"regexp"
	"strings"
	"text/template"
	"unicode/utf8"
)

// Message holds an app's templates of one locale, which replace the built-in ones; an
// empty field keeps the built-in one. Each is a Go text/template over Data, EmailHTML an
// html/template.
type Message struct {
	SMS          string
	Voice        string
	EmailSubject string
	EmailText    string
	EmailHTML    string
}

// Data is what every message template is executed with.
type Data struct {
	// Code is the code; in a voice template its digits are spelled out one by one.
	Code string
	// App is the app's name, or empty.
	App string
	// Minutes is the code's lifetime in whole minutes, rounded down (0 under a minute), so
	// a text never promises more time than the code has.
	Minutes int
	// Seconds is the lifetime in whole seconds, rounded down.
	Seconds int
	// Expiry is the lifetime as the locale says it ("5 minutes", "1 Minute", "5分"),
	// rounded down like Minutes; seconds under a minute.
	Expiry string
	// Amount and Payee are the payment the code confirms (PSD2), or empty.
	Amount, Payee string
}

// SampleNameLen and SamplePayeeLen are the longest app name and payee a template is tried
// with when it is set; the kernel bounds app names and payees by them, so that a message
// stays within what its template was checked for.
const (
	SampleNameLen  = 64
	SamplePayeeLen = 64
)

// sampleTemplateData is what a template is tried with when it is set: the longest code,
// a long app name, ten minutes.
var sampleTemplateData = Data{Code: "1234567890", App: strings.Repeat("A", SampleNameLen), Minutes: 10, Seconds: 600, Expiry: "10 minutes",
	Amount: "EUR 123456789012345.6789", Payee: strings.Repeat("P", SamplePayeeLen)}

// Bounds of a template's text, so that one app cannot make every message huge.
var templateLimits = map[string]int{"sms": 400, "voice": 800, "email_subject": 200, "email_text": 2000, "email_html": 8000}

// ParseText parses one text template and tries it on sample data, so that a
// template naming an unknown field fails here rather than when a code is sent.
func ParseText(name, text string) (*template.Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("is empty")
	}
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, templateError(err)
	}
	if err := t.Execute(&bytes.Buffer{}, sampleTemplateData); err != nil {
		return nil, templateError(err)
	}
	return t, nil
}

// ParseHTML is ParseText for an email's HTML part.
func ParseHTML(name, text string) (*htmltemplate.Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("is empty")
	}
	t, err := htmltemplate.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, templateError(err)
	}
	if err := t.Execute(&bytes.Buffer{}, sampleTemplateData); err != nil {
		return nil, templateError(err)
	}
	return t, nil
}

// templateErrorPrefix strips the template package's "template: name:" lead-in, whose
// name is ours and tells the caller nothing.
var templateErrorPrefix = regexp.MustCompile(`^(html/)?template: [^:]*:`)

func templateError(err error) error {
	return errors.New(strings.TrimSpace(templateErrorPrefix.ReplaceAllString(err.Error(), "line")))
}

// Check returns what is wrong with each set template, by its API name (sms, voice,
// email_subject, email_text, email_html): a template must parse, name only fields of
// Data, stay within its length and, except the subject, show the code.
func (t Message) Check() map[string]string {
	bad := map[string]string{}
	for _, f := range []struct{ name, text string }{
		{"sms", t.SMS}, {"voice", t.Voice}, {"email_subject", t.EmailSubject}, {"email_text", t.EmailText}, {"email_html", t.EmailHTML},
	} {
		if f.text == "" {
			continue
		}
		if n := utf8.RuneCountInString(f.text); n > templateLimits[f.name] {
			bad[f.name] = fmt.Sprintf("must be at most %d characters", templateLimits[f.name])
			continue
		}
		var out bytes.Buffer
		var err error
		if f.name == "email_html" {
			var h *htmltemplate.Template
			if h, err = ParseHTML(f.name, f.text); err == nil {
				err = h.Execute(&out, sampleTemplateData)
			}
		} else {
			var x *template.Template
			if x, err = ParseText(f.name, f.text); err == nil {
				err = x.Execute(&out, sampleTemplateData)
			}
		}
		switch {
		case err != nil:
			bad[f.name] = err.Error()
		case f.name != "email_subject" && !strings.Contains(out.String(), sampleTemplateData.Code):
			bad[f.name] = "must show the code with {{.Code}}"
		}
	}
	return bad
}

// Empty reports whether no template is set.
func (t Message) Empty() bool { return t == Message{} }

var (
	webOTPHost = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)
	appHashRe  = regexp.MustCompile(`^[A-Za-z0-9+/]{11}$`)
)

// CheckWebOTPDomain reports whether d can follow the "@" of a WebOTP line: a lower-case
// host name with at least one dot, no scheme, port or path.
func CheckWebOTPDomain(d string) error {
	if len(d) > 253 || !webOTPHost.MatchString(d) {
		return errors.New("must be a lower-case host name such as example.com, without scheme, port or path")
	}
	return nil
}

// CheckAppHash reports whether h is an Android SMS Retriever app hash: the 11 characters
// of base64 (letters, digits, + and /) that the SMS Retriever API computes for an app.
func CheckAppHash(h string) error {
	if !appHashRe.MatchString(h) {
		return errors.New("must be the 11 characters (letters, digits, + and /) of the SMS Retriever app hash")
	}
	return nil
}
