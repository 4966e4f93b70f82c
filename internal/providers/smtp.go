package providers

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"otpgate/internal/delivery"
	"otpgate/internal/email"
	"otpgate/internal/otp"
)

// SMTP's variables, without an instance's suffix.
const (
	smtpURL    = "SMTP_URL"
	smtpFrom   = "SMTP_FROM"
	smtpCAFile = "SMTP_CA_FILE"
)

// smtpKind sends each code as one email over SMTP. It takes no callbacks.
func smtpKind() Kind {
	return Kind{
		Name:     "smtp",
		Channels: []string{otp.ChannelEmail},
		Settings: []Setting{
			{Name: smtpURL, Required: true, Example: "smtp://mail.example.com"},
			{Name: smtpFrom, Required: true, Example: "OTP <otp@example.com>"},
			{Name: smtpCAFile},
		},
		New: newSMTP,
	}
}

// newSMTP builds an SMTP sender, trusting SMTP_CA_FILE's certificates when it is set.
func newSMTP(s Settings, _ Options) (Built, error) {
	c := email.Config{URL: s.Get(smtpURL), From: s.Get(smtpFrom), Name: s.Name}
	if file := s.Get(smtpCAFile); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return Built{}, fmt.Errorf("%s: %w", s.Var(smtpCAFile), err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return Built{}, fmt.Errorf("%s=%s: no PEM certificate in it", s.Var(smtpCAFile), file)
		}
		c.TLS = &tls.Config{RootCAs: roots}
	}
	m, err := email.New(c)
	if err != nil {
		return Built{}, fmt.Errorf("%s, %s: %w", s.Var(smtpURL), s.Var(smtpFrom), err)
	}
	return Built{Provider: delivery.Provider{Sender: m}}, nil
}
