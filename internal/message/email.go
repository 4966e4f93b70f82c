package message

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"text/template"

	"otpgate/internal/otp"
)

// emailLayout is the built-in HTML part: one column, the code large and easy to copy,
// inline styles only (mail clients drop style sheets), nothing loaded from elsewhere.
var emailLayout = htmltemplate.Must(htmltemplate.New("email").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}" dir="{{.Dir}}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1d2129">
<div style="max-width:480px;margin:0 auto;background:#ffffff;border-radius:8px;padding:32px">
<p style="margin:0 0 16px;font-size:16px">{{.Intro}}</p>
<p dir="ltr" style="margin:0 0 16px;font-size:32px;font-weight:bold;letter-spacing:6px;font-family:Menlo,Consolas,monospace">{{.Code}}</p>
<p style="margin:0 0 8px;font-size:14px">{{.Expiry}} {{.Warn}}</p>
<p style="margin:24px 0 0;font-size:12px;color:#6b7280">{{.Ignore}}</p>
</div>
</body>
</html>
`))

// email renders the subject and both parts of an email.
func (l *locale) email(d Data) (otp.MessageContent, error) {
	var out otp.MessageContent
	lines := map[string]string{}
	for _, t := range []struct {
		name string
		t    *template.Template
	}{{"subject", l.subject}, {"intro", l.intro}, {"expiry", l.expiry}, {"warn", l.warn}, {"ignore", l.ignore}} {
		s, err := run(t.t, d)
		if err != nil {
			return out, err
		}
		lines[t.name] = s
	}
	var err error
	out.Subject = strings.Join(strings.Fields(lines["subject"]), " ") // a header is one line
	// The payment goes with the intro of the built-in parts, after an app's own text.
	if lines["intro"], err = l.withPayment(lines["intro"], d, false, " "); err != nil {
		return out, err
	}
	if l.text != nil {
		if out.Body, err = run(l.text, d); err == nil {
			out.Body, err = l.withPayment(out.Body, d, l.ownEmail, "\n\n")
		}
	} else {
		out.Body = fmt.Sprintf("%s\n\n    %s\n\n%s %s\n\n%s\n", lines["intro"], d.Code, lines["expiry"], lines["warn"], lines["ignore"])
	}
	if err != nil {
		return out, err
	}
	var b bytes.Buffer
	if l.html != nil {
		err = l.html.Execute(&b, d)
	} else {
		dir := "ltr"
		if l.rtl {
			dir = "rtl"
		}
		err = emailLayout.Execute(&b, map[string]string{
			"Lang": l.tag, "Dir": dir, "Subject": out.Subject, "Intro": lines["intro"], "Code": d.Code,
			"Expiry": lines["expiry"], "Warn": lines["warn"], "Ignore": lines["ignore"],
		})
	}
	if err != nil {
		return out, fmt.Errorf("message: email html: %w", err)
	}
	out.HTML = b.String()
	return out, nil
}
