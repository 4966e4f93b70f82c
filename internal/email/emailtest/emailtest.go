// Package emailtest is a real SMTP server for tests (emersion/go-smtp) that offers
// STARTTLS (or TLS from the first byte, or neither) with a certificate of a test CA,
// checks PLAIN credentials, keeps every message it accepts and can refuse or hang as
// told. The email sender's tests and the server's end-to-end tests share it.
package emailtest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"otpgate/internal/testenv"
)

// Mode is how the server does TLS.
type Mode int

// Modes.
const (
	// STARTTLS offers STARTTLS on a plain connection.
	STARTTLS Mode = iota
	// Implicit speaks TLS from the first byte (smtps).
	Implicit
	// Plain offers no TLS at all.
	Plain
)

// Mailbox is a running SMTP server.
type Mailbox struct {
	// Addr is host:port on the loopback interface.
	Addr string
	// CA trusts the server's certificate; CAFile is the same CA as a PEM file.
	CA     *x509.CertPool
	CAFile string
	// User and Password are the credentials AUTH PLAIN accepts.
	User, Password string
	// RefuseRcpt answers RCPT TO with 550; Hang holds the answer to the end of DATA
	// until it is closed.
	RefuseRcpt bool
	Hang       chan struct{}

	mu   sync.Mutex
	got  []Message
	auth []string
}

// Message is one message the server accepted.
type Message struct {
	From, To string
	Data     []byte
	// TLS tells whether the message came over TLS.
	TLS bool
}

// New starts a server for one test on a free loopback port; configure may change the
// Mailbox before it serves. It is stopped at cleanup.
func New(t testing.TB, m Mode, configure func(*Mailbox)) *Mailbox {
	t.Helper()
	pki := testenv.NewPKI(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		t.Fatalf("emailtest: server certificate: %v", err)
	}
	caPEM, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatalf("emailtest: CA: %v", err)
	}
	mb := &Mailbox{CA: x509.NewCertPool(), CAFile: pki.CA, User: "otpgate", Password: "s3cret pass"}
	mb.CA.AppendCertsFromPEM(caPEM)
	if configure != nil {
		configure(mb)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{mb: mb, conn: c}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("emailtest: listen: %v", err)
	}
	switch m {
	case STARTTLS:
		srv.TLSConfig = tlsCfg
	case Implicit:
		ln = tls.NewListener(ln, tlsCfg)
	case Plain:
		srv.AllowInsecureAuth = true
	}
	mb.Addr = ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, smtp.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			t.Errorf("emailtest: smtp server: %v", err)
		}
	}()
	t.Cleanup(func() {
		if mb.Hang != nil {
			select {
			case <-mb.Hang:
			default:
				close(mb.Hang)
			}
		}
		_ = srv.Close()
		// Close only closes the listeners Serve has registered; a test that never
		// connected may clean up before Serve started, so close ours too.
		_ = ln.Close()
		<-done
	})
	return mb
}

// Messages returns the messages accepted so far.
func (mb *Mailbox) Messages() []Message {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]Message(nil), mb.got...)
}

// Logins returns the user names that tried AUTH, in order.
func (mb *Mailbox) Logins() []string {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]string(nil), mb.auth...)
}

type session struct {
	mb       *Mailbox
	conn     *smtp.Conn
	from, to string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		s.mb.mu.Lock()
		s.mb.auth = append(s.mb.auth, user)
		s.mb.mu.Unlock()
		if user != s.mb.User || pass != s.mb.Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.mb.RefuseRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	s.to = to
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if s.mb.Hang != nil {
		<-s.mb.Hang
		return errors.New("gone")
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.mb.mu.Lock()
	s.mb.got = append(s.mb.got, Message{From: s.from, To: s.to, Data: b, TLS: isTLS})
	s.mb.mu.Unlock()
	return nil
}

func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }

// Parsed is a message read back: its headers decoded and its parts by media type.
type Parsed struct {
	Subject, MessageID string
	// Parts holds each part's decoded body by media type, such as text/plain.
	Parts map[string]string
}

// Parse reads a message the way a mail client does: the RFC 2047 subject decoded,
// each part of a multipart body decoded from quoted-printable.
func (m Message) Parse() (Parsed, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return Parsed{}, err
	}
	out := Parsed{MessageID: msg.Header.Get("Message-ID"), Parts: map[string]string{}}
	if out.Subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return out, err
	}
	ct, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return out, err
	}
	if !strings.HasPrefix(ct, "multipart/") {
		b, err := io.ReadAll(msg.Body)
		out.Parts[ct] = string(b)
		return out, err
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := r.NextPart() // decodes quoted-printable
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return out, err
		}
		pct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out.Parts[pct] = string(b)
	}
}
