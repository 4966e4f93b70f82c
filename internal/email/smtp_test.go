package email_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"otpgate/internal/email"
	"otpgate/internal/email/emailtest"
	"otpgate/internal/otp"
)

const code = "483920"

func message() otp.Message {
	return otp.Message{
		ID: "0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e", Channel: otp.ChannelEmail, To: "user@example.com", Locale: "ja",
		Subject: "【Example】認証コードのお知らせ", Body: "認証コード: " + code + "\n5分以内に入力してください。",
		HTML: "<p>認証コード: <b>" + code + "</b></p>", Code: code,
	}
}

func newSender(t *testing.T, mb *emailtest.Mailbox, rawURL string, edit func(*email.Config)) *email.SMTP {
	t.Helper()
	cfg := email.Config{URL: rawURL, From: "Example <no-reply@example.com>", TLS: &tls.Config{RootCAs: mb.CA}}
	if edit != nil {
		edit(&cfg)
	}
	s, err := email.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestSendOverSTARTTLS(t *testing.T) {
	mb := emailtest.New(t, emailtest.STARTTLS, nil)
	s := newSender(t, mb, "smtp://otpgate:s3cret%20pass@"+mb.Addr, nil)
	id, err := s.Send(ctx(t), message())
	if err != nil || id != "0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e@example.com" {
		t.Fatalf("Send: got %q, %v, want the Message-ID", id, err)
	}
	got := mb.Messages()
	if len(got) != 1 {
		t.Fatalf("got %d mails, want 1", len(got))
	}
	m := got[0]
	if !m.TLS || m.From != "no-reply@example.com" || m.To != "user@example.com" || strings.Join(mb.Logins(), ",") != "otpgate" {
		t.Errorf("got TLS %v from %q to %q auth %v, want TLS from no-reply@ to user@ as otpgate", m.TLS, m.From, m.To, mb.Logins())
	}

	t.Run("TheMessageCarriesSubjectTextAndHTML", func(t *testing.T) {
		parsed, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(parsed.Header.Get("Subject"))
		if err != nil || subject != message().Subject {
			t.Errorf("subject: got %q, %v, want %q", subject, err, message().Subject)
		}
		if got := parsed.Header.Get("Message-ID"); got != "<"+id+">" || parsed.Header.Get("Auto-Submitted") != "auto-generated" {
			t.Errorf("headers: got %v", parsed.Header)
		}
		_, params, err := mime.ParseMediaType(parsed.Header.Get("Content-Type"))
		if err != nil {
			t.Fatalf("content type: %v", err)
		}
		parts := map[string]string{}
		r := multipart.NewReader(parsed.Body, params["boundary"])
		for {
			p, err := r.NextPart() // decodes quoted-printable
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("part: %v", err)
			}
			b, _ := io.ReadAll(p)
			ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			parts[ct] = string(b)
		}
		if parts["text/plain"] != strings.ReplaceAll(message().Body, "\n", "\r\n") || parts["text/html"] != message().HTML {
			t.Errorf("parts: got %q, want the text and the HTML as sent", parts)
		}
	})
}

func TestSendOverSMTPS(t *testing.T) {
	mb := emailtest.New(t, emailtest.Implicit, nil)
	s := newSender(t, mb, "smtps://otpgate:s3cret%20pass@"+mb.Addr, nil)
	if _, err := s.Send(ctx(t), message()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := mb.Messages(); len(got) != 1 || !got[0].TLS {
		t.Errorf("got %+v, want one mail over TLS", got)
	}
}

func TestTLSPolicy(t *testing.T) {
	t.Run("LoopbackWithoutSTARTTLSIsAllowed", func(t *testing.T) {
		mb := emailtest.New(t, emailtest.Plain, nil)
		s := newSender(t, mb, "smtp://"+mb.Addr, nil)
		if _, err := s.Send(ctx(t), message()); err != nil || len(mb.Messages()) != 1 {
			t.Errorf("got %v, want the mail delivered in the clear to loopback", err)
		}
	})

	t.Run("ElsewhereWithoutSTARTTLSIsRefusedBeforeAnythingIsSent", func(t *testing.T) {
		mb := emailtest.New(t, emailtest.Plain, nil)
		// mail.example.com is not loopback; the dialer takes it to the test server.
		s := newSender(t, mb, "smtp://mail.example.com:587", func(c *email.Config) {
			c.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
				return new(net.Dialer).DialContext(ctx, network, mb.Addr)
			}
		})
		_, err := s.Send(ctx(t), message())
		if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "STARTTLS") || len(mb.Messages()) != 0 {
			t.Errorf("got %v, want a definite error about STARTTLS and no mail", err)
		}
	})

	t.Run("UntrustedCertificateIsDefinite", func(t *testing.T) {
		mb := emailtest.New(t, emailtest.STARTTLS, nil)
		s := newSender(t, mb, "smtp://"+mb.Addr, func(c *email.Config) { c.TLS = nil })
		if _, err := s.Send(ctx(t), message()); !errors.Is(err, otp.ErrNotDelivered) || len(mb.Messages()) != 0 {
			t.Errorf("got %v, want a definite error and no mail", err)
		}
	})
}

func TestFailures(t *testing.T) {
	t.Run("WrongPasswordIsDefinite", func(t *testing.T) {
		mb := emailtest.New(t, emailtest.STARTTLS, nil)
		s := newSender(t, mb, "smtp://otpgate:wrong@"+mb.Addr, nil)
		_, err := s.Send(ctx(t), message())
		if !errors.Is(err, otp.ErrNotDelivered) || strings.Contains(err.Error(), "wrong") {
			t.Errorf("got %v, want a definite error without the password", err)
		}
	})

	t.Run("RefusedRecipientIsDefinite", func(t *testing.T) {
		mb := emailtest.New(t, emailtest.STARTTLS, func(mb *emailtest.Mailbox) { mb.RefuseRcpt = true })
		_, err := newSender(t, mb, "smtp://"+mb.Addr, nil).Send(ctx(t), message())
		if !errors.Is(err, otp.ErrNotDelivered) || !strings.Contains(err.Error(), "550") {
			t.Errorf("got %v, want a definite 550", err)
		}
	})

	t.Run("NoAnswerToTheMessageIsUnknown", func(t *testing.T) {
		mb := emailtest.New(t, emailtest.STARTTLS, func(mb *emailtest.Mailbox) { mb.Hang = make(chan struct{}) })
		c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := newSender(t, mb, "smtp://"+mb.Addr, nil).Send(c, message())
		if err == nil || errors.Is(err, otp.ErrNotDelivered) || strings.Contains(err.Error(), code) {
			t.Errorf("got %v, want an unknown outcome without the code", err)
		}
	})

	t.Run("RefusedConnectionIsDefinite", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		_ = l.Close()
		s, err := email.New(email.Config{URL: "smtp://" + addr, From: "no-reply@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(ctx(t), message()); !errors.Is(err, otp.ErrNotDelivered) {
			t.Errorf("got %v, want ErrNotDelivered", err)
		}
	})

	t.Run("BadRecipientIsDefinite", func(t *testing.T) {
		mb := emailtest.New(t, emailtest.STARTTLS, nil)
		m := message()
		m.To = "user@example.com\r\nBcc: x@example.com"
		if _, err := newSender(t, mb, "smtp://"+mb.Addr, nil).Send(ctx(t), m); !errors.Is(err, otp.ErrNotDelivered) || len(mb.Messages()) != 0 {
			t.Errorf("got %v, want a definite error and no mail", err)
		}
	})
}

func TestNew(t *testing.T) {
	for _, bad := range []email.Config{
		{URL: "http://mail.example.com", From: "a@example.com"},
		{URL: "smtp://", From: "a@example.com"},
		{URL: "smtp://mail.example.com/path", From: "a@example.com"},
		{URL: "smtp://mail.example.com", From: "not an address"},
	} {
		if _, err := email.New(bad); err == nil {
			t.Errorf("%v: got nil, want an error", bad)
		}
	}
	cfg := email.Config{URL: "smtps://user:hunter2@mail.example.com", From: "a@example.com"}
	s, err := email.New(cfg)
	if err != nil || s.Name() != "smtp" {
		t.Fatalf("got %v, %v, want an smtp sender", s, err)
	}
	if out := cfg.String(); strings.Contains(out, "hunter2") {
		t.Errorf("got %q, want no password", out)
	}
}
