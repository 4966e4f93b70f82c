package email_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"otpgate/internal/testenv"
)

// mailbox is a real SMTP server for one test (emersion/go-smtp) that keeps what it got.
type mailbox struct {
	addr string
	// CA trusts the server's certificate.
	CA *x509.CertPool

	user, password string
	// refuseRcpt answers RCPT TO with 550; hang holds the answer to the end of DATA.
	refuseRcpt bool
	hang       chan struct{}

	mu   sync.Mutex
	got  []received
	auth []string
}

// received is one message the server accepted.
type received struct {
	From, To string
	Data     []byte
	// TLS tells whether the message came over TLS.
	TLS bool
}

type mode int

const (
	starttls mode = iota // STARTTLS offered
	implicit             // TLS from the first byte (smtps)
	plain                // no TLS at all
)

func newMailbox(t *testing.T, m mode, configure func(*mailbox)) *mailbox {
	t.Helper()
	pki := testenv.NewPKI(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		t.Fatalf("server certificate: %v", err)
	}
	caPEM, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatalf("CA: %v", err)
	}
	mb := &mailbox{CA: x509.NewCertPool(), user: "otpgate", password: "s3cret pass"}
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
		t.Fatalf("listen: %v", err)
	}
	switch m {
	case starttls:
		srv.TLSConfig = tlsCfg
	case implicit:
		ln = tls.NewListener(ln, tlsCfg)
	case plain:
		srv.AllowInsecureAuth = true
	}
	mb.addr = ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, smtp.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			t.Errorf("smtp server: %v", err)
		}
	}()
	t.Cleanup(func() {
		if mb.hang != nil {
			select {
			case <-mb.hang:
			default:
				close(mb.hang)
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

func (mb *mailbox) mails() []received {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]received(nil), mb.got...)
}

type session struct {
	mb       *mailbox
	conn     *smtp.Conn
	from, to string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		s.mb.mu.Lock()
		s.mb.auth = append(s.mb.auth, user)
		s.mb.mu.Unlock()
		if user != s.mb.user || pass != s.mb.password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.mb.refuseRcpt {
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
	if s.mb.hang != nil {
		<-s.mb.hang
		return errors.New("gone")
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.mb.mu.Lock()
	s.mb.got = append(s.mb.got, received{From: s.from, To: s.to, Data: b, TLS: isTLS})
	s.mb.mu.Unlock()
	return nil
}

func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }
