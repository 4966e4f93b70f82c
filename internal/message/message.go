// Package message renders what otpgate sends: the SMS and WhatsApp text, the words a
// voice call reads out, and an email's subject, plain and HTML parts, from templates per
// locale (every language Twilio Verify writes its SMS in, each replaceable). It implements otp.Renderer and tells an
// SMS's encoding and segment count.
package message

import (
	"fmt"
	htmltemplate "html/template"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/templates"
)

// Data is what a template is executed with.
type Data = templates.Data

// Templates replaces built-in templates of one locale; empty fields keep the built-in
// ones. Each is a text/template over Data, EmailHTML an html/template.
type Templates = templates.Message

// maxCustom bounds how many apps' template sets a Catalog keeps parsed; past it, the
// cache starts over (each set is parsed again when next used).
const maxCustom = 512

// Catalog holds the templates of every locale; it is safe for concurrent use.
type Catalog struct {
	locales map[string]*locale

	mu sync.Mutex
	// custom holds locales with an app's templates in place, by locale and templates.
	custom map[customKey]*locale
}

// customKey names one locale with one set of an app's templates.
type customKey struct {
	locale string
	t      Templates
}

type locale struct {
	texts
	sms, voice, subject, intro, expiry, warn, ignore *template.Template
	// payment names the payment a code confirms (paymentTexts); ownSMS, ownVoice and
	// ownEmail mark an app's templates that name it themselves.
	payment                    *template.Template
	ownSMS, ownVoice, ownEmail bool
	// text and html replace the built-in email body when set.
	text *template.Template
	html *htmltemplate.Template
}

// New returns the built-in catalog with custom's templates in place of the built-in
// ones of their locales. Every template is parsed and tried, so a bad one fails here.
func New(custom map[string]Templates) (*Catalog, error) {
	c := &Catalog{locales: map[string]*locale{}, custom: map[customKey]*locale{}}
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
	if !p.Templates.Empty() {
		var err error
		if l, err = c.withTemplates(p.Locale, l, p.Templates); err != nil {
			return out, err
		}
	}
	d := l.data(p)
	var err error
	switch p.Channel {
	case otp.ChannelSMS, otp.ChannelWhatsApp, "":
		if out.Body, err = run(l.sms, d); err != nil {
			return out, err
		}
		if out.Body, err = l.withPayment(out.Body, d, l.ownSMS, "\n"); err != nil {
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
		if out.Body, err = run(l.voice, d); err == nil {
			out.Body, err = l.withPayment(out.Body, d, l.ownVoice, " ")
		}
	case otp.ChannelEmail:
		out, err = l.email(d)
	default:
		return out, &otp.ErrInvalidRequest{Fields: map[string]string{"channel": "must be one of " + strings.Join(otp.Channels(), ", ")}}
	}
	return out, err
}

// data is the template data for p in this locale.
func (l *locale) data(p otp.MessageParams) Data {
	secs := max(int(p.TTL/time.Second), 0)
	d := Data{Code: p.Code, App: p.App, Minutes: secs / 60, Seconds: secs, Amount: p.Amount, Payee: p.Payee}
	if d.Minutes > 0 {
		d.Expiry = l.count(l.minute, d.Minutes)
	} else {
		d.Expiry = l.count(l.second, secs)
	}
	return d
}

// withTemplates is the locale with an app's templates in place, parsed once and kept.
func (c *Catalog) withTemplates(tag string, base *locale, t Templates) (*locale, error) {
	key := customKey{tag, t}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.custom[key]; ok {
		return l, nil
	}
	l := *base
	if err := l.override(t); err != nil {
		return nil, fmt.Errorf("message: app templates of %s: %w", tag, err)
	}
	if len(c.custom) >= maxCustom {
		clear(c.custom)
	}
	c.custom[key] = &l
	return &l, nil
}

// addSMSLines appends the Android app hash and then the WebOTP line, which the browser
// only reads as the message's last line.
func addSMSLines(body string, p otp.MessageParams) (string, error) {
	if p.AppHash != "" {
		if err := templates.CheckAppHash(p.AppHash); err != nil {
			return "", fmt.Errorf("message: app hash: %w", err)
		}
		body += "\n" + p.AppHash
	}
	if p.WebOTPDomain != "" {
		if err := templates.CheckWebOTPDomain(p.WebOTPDomain); err != nil {
			return "", fmt.Errorf("message: WebOTP domain: %w", err)
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

// parseText parses and tries one text template.
func parseText(name, text string) (*template.Template, error) {
	t, err := templates.ParseText(name, text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
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
	p, err := parsePayment(tag)
	if err != nil {
		return nil, err
	}
	l.payment = p
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
	l.ownSMS = t.SMS != "" && namesPayment(t.SMS)
	l.ownVoice = t.Voice != "" && namesPayment(t.Voice)
	l.ownEmail = t.EmailText != "" && namesPayment(t.EmailText) && (t.EmailHTML == "" || namesPayment(t.EmailHTML))
	if t.EmailHTML != "" {
		h, err := templates.ParseHTML("email html", t.EmailHTML)
		if err != nil {
			return fmt.Errorf("email html: %w", err)
		}
		l.html = h
	}
	return nil
}

// BuiltinSMS is the built-in SMS template of a locale, as written (a text/template over
// Data); ok is false for a locale without one.
func (c *Catalog) BuiltinSMS(tag string) (string, bool) {
	l, ok := c.locales[tag]
	if !ok {
		return "", false
	}
	return l.texts.sms, true
}
