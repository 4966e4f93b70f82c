// Package message renders what otpgate sends: the SMS and WhatsApp text, the words a
// voice call reads out, and an email's subject, plain and HTML parts, from templates per
// locale (twelve built in, each replaceable). It implements otp.Renderer and tells an
// SMS's encoding and segment count.
package message

import (
	"bytes"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"otpgate/internal/otp"
)

// Data is what a template is executed with.
type Data struct {
	// Code is the code; in a voice template its digits are spelled out one by one.
	Code string
	// App is the app's name, or empty.
	App string
	// Minutes is the code's lifetime in whole minutes, rounded down (0 under a minute), so a
	// text never promises more time than the code has.
	Minutes int
	// Seconds is the lifetime in whole seconds, rounded down.
	Seconds int
	// Expiry is the lifetime as the locale says it ("5 minutes", "1 minute"; seconds
	// under a minute), rounded down like Minutes.
	Expiry string
}

// Templates replaces built-in templates of one locale; empty fields keep the built-in
// ones. Each is a text/template over Data, EmailHTML an html/template.
type Templates struct {
	SMS, Voice, EmailSubject, EmailText, EmailHTML string
}

// Catalog holds the templates of every locale; it is safe for concurrent use.
type Catalog struct {
	locales map[string]*locale
}

type locale struct {
	texts
	sms, voice, subject, intro, expiry, warn, ignore *template.Template
	// text and html replace the built-in email body when set.
	text *template.Template
	html *htmltemplate.Template
}

// New returns the built-in catalog with custom's templates in place of the built-in
// ones of their locales. Every template is parsed and tried, so a bad one fails here.
func New(custom map[string]Templates) (*Catalog, error) {
	c := &Catalog{locales: map[string]*locale{}}
	for tag, t := range builtin {
		l, err := parseLocale(tag, t)
		if err != nil {
			return nil, err
		}
		c.locales[tag] = l
	}
	for tag, t := range custom {
		l, ok := c.locales[tag]
		if !ok {
			return nil, fmt.Errorf("message: templates for unknown locale %q (have %s)", tag, strings.Join(c.Locales(), ", "))
		}
		if err := l.override(t); err != nil {
			return nil, fmt.Errorf("message: locale %s: %w", tag, err)
		}
	}
	return c, nil
}

// Locales lists the locales, sorted.
func (c *Catalog) Locales() []string {
	out := make([]string, 0, len(c.locales))
	for tag := range c.locales {
		out = append(out, tag)
	}
	slices.Sort(out)
	return out
}

// HasLocale reports whether the catalog has templates for the locale.
func (c *Catalog) HasLocale(tag string) bool { _, ok := c.locales[tag]; return ok }

// Render implements otp.Renderer.
func (c *Catalog) Render(p otp.MessageParams) (otp.MessageContent, error) {
	var out otp.MessageContent
	l, ok := c.locales[p.Locale]
	if !ok {
		return out, &otp.ErrInvalidRequest{Fields: map[string]string{"locale": "must be one of " + strings.Join(c.Locales(), ", ")}}
	}
	d := l.data(p)
	var err error
	switch p.Channel {
	case otp.ChannelSMS, otp.ChannelWhatsApp, "":
		if out.Body, err = run(l.sms, d); err != nil {
			return out, err
		}
		if p.Channel != otp.ChannelWhatsApp {
			if out.Body, err = addSMSLines(out.Body, p); err != nil {
				return out, err
			}
			out.Encoding, out.Segments = Encoding(out.Body)
		}
	case otp.ChannelVoice:
		d.Code = strings.Join(strings.Split(p.Code, ""), l.digitSep)
		out.Body, err = run(l.voice, d)
	case otp.ChannelEmail:
		out, err = l.email(d)
	default:
		return out, &otp.ErrInvalidRequest{Fields: map[string]string{"channel": "must be one of " + strings.Join(otp.Channels, ", ")}}
	}
	return out, err
}

// data is the template data for p in this locale.
func (l *locale) data(p otp.MessageParams) Data {
	secs := max(int(p.TTL/time.Second), 0)
	d := Data{Code: p.Code, App: p.App, Minutes: secs / 60, Seconds: secs}
	switch {
	case d.Minutes == 1:
		d.Expiry = fmt.Sprintf(l.minute, 1)
	case d.Minutes > 1:
		d.Expiry = fmt.Sprintf(l.minutes, d.Minutes)
	case secs == 1:
		d.Expiry = fmt.Sprintf(l.second, 1)
	default:
		d.Expiry = fmt.Sprintf(l.seconds, secs)
	}
	return d
}

var (
	hostname = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)
	appHash  = regexp.MustCompile(`^[A-Za-z0-9+/]{11}$`)
)

// CheckWebOTPDomain reports whether d can follow the "@" of a WebOTP line: a lower-case
// host name with at least one dot, no scheme, port or path.
func CheckWebOTPDomain(d string) error {
	if len(d) > 253 || !hostname.MatchString(d) {
		return fmt.Errorf("WebOTP domain %q: want a lower-case host name such as example.com", d)
	}
	return nil
}

// CheckAppHash reports whether h is an Android SMS Retriever app hash: 11 characters of
// base64 (letters, digits, + and /).
func CheckAppHash(h string) error {
	if !appHash.MatchString(h) {
		return fmt.Errorf("app hash %q: want the 11 characters the SMS Retriever API computes", h)
	}
	return nil
}

// addSMSLines appends the Android app hash and then the WebOTP line, which the browser
// only reads as the message's last line.
func addSMSLines(body string, p otp.MessageParams) (string, error) {
	if p.AppHash != "" {
		if err := CheckAppHash(p.AppHash); err != nil {
			return "", fmt.Errorf("message: %w", err)
		}
		body += "\n" + p.AppHash
	}
	if p.WebOTPDomain != "" {
		if err := CheckWebOTPDomain(p.WebOTPDomain); err != nil {
			return "", fmt.Errorf("message: %w", err)
		}
		body += "\n@" + p.WebOTPDomain + " #" + p.Code
	}
	return body, nil
}

// run executes a text template.
func run(t *template.Template, d Data) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("message: template %s: %w", t.Name(), err)
	}
	return b.String(), nil
}

// sample is the data every template is tried with when it is parsed.
var sample = Data{Code: "123456", App: "Example", Minutes: 5, Seconds: 300, Expiry: "5 minutes"}

// parseText parses and tries one text template.
func parseText(name, text string) (*template.Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New(name + ": empty template")
	}
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	if _, err := run(t, sample); err != nil {
		return nil, err
	}
	return t, nil
}

func parseLocale(tag string, t texts) (*locale, error) {
	l := &locale{texts: t}
	for _, f := range []struct {
		dst  **template.Template
		name string
		text string
	}{
		{&l.sms, "sms", t.sms}, {&l.voice, "voice", t.voice}, {&l.subject, "subject", t.subject},
		{&l.intro, "intro", t.intro}, {&l.expiry, "expiry", t.expiry}, {&l.warn, "warn", t.warn}, {&l.ignore, "ignore", t.ignore},
	} {
		p, err := parseText(tag+"/"+f.name, f.text)
		if err != nil {
			return nil, fmt.Errorf("message: built-in %s: %w", tag, err)
		}
		*f.dst = p
	}
	return l, nil
}

// override puts custom templates in place of built-in ones.
func (l *locale) override(t Templates) error {
	for _, f := range []struct {
		dst  **template.Template
		name string
		text string
	}{{&l.sms, "sms", t.SMS}, {&l.voice, "voice", t.Voice}, {&l.subject, "email subject", t.EmailSubject}, {&l.text, "email text", t.EmailText}} {
		if f.text == "" {
			continue
		}
		p, err := parseText(f.name, f.text)
		if err != nil {
			return err
		}
		*f.dst = p
	}
	if t.EmailHTML != "" {
		h, err := htmltemplate.New("email html").Option("missingkey=error").Parse(t.EmailHTML)
		if err != nil {
			return err
		}
		if err := h.Execute(&bytes.Buffer{}, sample); err != nil {
			return err
		}
		l.html = h
	}
	return nil
}
