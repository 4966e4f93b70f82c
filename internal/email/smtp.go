// Package email sends codes by email over SMTP: an otp.Sender for the email channel.
package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// Config configures an SMTP sender (SMTP_URL, SMTP_FROM).
type Config struct {
	// URL is smtp://[user:password@]host[:port] (STARTTLS, port 587 by default) or
	// smtps://…[:port] (TLS from the first byte, port 465 by default).
	URL string
	// From is the sender, "name <address>" or an address.
	From string
	// Name is the instance's name in routes, history and metrics; empty means "smtp".
	Name string
	// TLS is the TLS configuration (its RootCAs, say); nil means the system's roots.
	TLS *tls.Config
	// LocalName is the name given in EHLO; empty means "localhost".
	LocalName string
	// Dial opens the connection; nil means a net.Dialer. Tests reach a server by another name with it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// String hides the password, so printing the config cannot leak it.
func (c Config) String() string {
	return fmt.Sprintf("{URL:%s From:%s Name:%s}", redact(c.URL), c.From, c.Name)
}

// LogValue hides the password from slog.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", redact(c.URL)), slog.String("from", c.From), slog.String("name", c.Name))
}

// SMTP sends each message as one email to one recipient.
type SMTP struct {
	name      string
	host      string
	addr      string
	implicit  bool // smtps
	user      string
	password  string
	from      *mail.Address
	tls       *tls.Config
	localName string
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)

	// Now stamps the Date header; tests replace it.
	Now func() time.Time
}

// New checks cfg and returns an SMTP sender.
func New(cfg Config) (*SMTP, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("email: URL %q: want smtp://[user:password@]host[:port] or smtps://…", redact(cfg.URL))
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("email: from %q: %w", cfg.From, err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"smtp": "587", "smtps": "465"}[u.Scheme]
	}
	s := &SMTP{
		name: cfg.Name, host: u.Hostname(), addr: net.JoinHostPort(u.Hostname(), port), implicit: u.Scheme == "smtps",
		from: from, localName: cfg.LocalName, dial: cfg.Dial, Now: time.Now,
	}
	if s.name == "" {
		s.name = "smtp"
	}
	if s.localName == "" {
		s.localName = "localhost"
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.password, _ = u.User.Password()
	}
	if cfg.TLS != nil {
		s.tls = cfg.TLS.Clone()
	} else {
		s.tls = &tls.Config{}
	}
	if s.tls.ServerName == "" {
		s.tls.ServerName = s.host
	}
	s.tls.MinVersion = max(s.tls.MinVersion, tls.VersionTLS12)
	if s.dial == nil {
		var d net.Dialer
		s.dial = d.DialContext
	}
	return s, nil
}

// Name is the instance's name, "smtp" unless configured otherwise.
func (s *SMTP) Name() string { return s.name }

// Send delivers m to the address m.To and returns the Message-ID it gave the email.
// Everything up to the server's answer to the message's end is definite (the error
// wraps otp.ErrNotDelivered): no server keeps a message it has not acknowledged. Only
// losing the connection while that answer is due leaves the outcome unknown.
func (s *SMTP) Send(ctx context.Context, m otp.Message) (string, error) {
	to, err := mail.ParseAddress(m.To)
	if err != nil || strings.ContainsAny(m.To, "\r\n") {
		return "", s.definite("recipient", fmt.Errorf("not an email address"), m)
	}
	id := m.ID
	if id == "" {
		id = fmt.Sprintf("%x", s.Now().UnixNano())
	}
	messageID := id + "@" + domainOf(s.from.Address)
	msg, err := compose(s.from.String(), to.String(), messageID, m, s.Now())
	if err != nil {
		return "", s.definite("compose", err, m)
	}

	conn, err := s.connect(ctx)
	if err != nil {
		return "", s.definite("connect", err, m)
	}
	defer conn.Close()
	// The session obeys ctx: its deadline is the socket's, and cancelling it fails the
	// call in progress at once.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return "", s.definite("greeting", err, m)
	}
	defer c.Close()
	if err := s.open(c); err != nil {
		return "", s.definite("session", err, m)
	}
	if err := c.Mail(s.from.Address); err != nil {
		return "", s.definite("MAIL FROM", err, m)
	}
	if err := c.Rcpt(to.Address); err != nil {
		return "", s.definite("RCPT TO", err, m)
	}
	w, err := c.Data()
	if err != nil {
		return "", s.definite("DATA", err, m)
	}
	if _, err := w.Write(msg); err != nil {
		return "", s.definite("DATA", err, m) // a message without its end is dropped
	}
	if err := w.Close(); err != nil {
		var reply *textproto.Error
		if errors.As(err, &reply) {
			return "", s.definite("end of DATA", err, m)
		}
		return "", fmt.Errorf("%s: end of DATA (delivery unknown): %s", s.name, mask(err.Error(), m))
	}
	_ = c.Quit()
	return messageID, nil
}

// connect dials, and for smtps completes the TLS handshake.
func (s *SMTP) connect(ctx context.Context) (net.Conn, error) {
	conn, err := s.dial(ctx, "tcp", s.addr)
	if err != nil || !s.implicit {
		return conn, err
	}
	tc := tls.Client(conn, s.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return tc, nil
}

// open greets the server, upgrades to TLS (required except to a loopback server)
// and authenticates when the URL has a user.
func (s *SMTP) open(c *smtp.Client) error {
	if err := c.Hello(s.localName); err != nil {
		return err
	}
	if !s.implicit {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tls); err != nil {
				return fmt.Errorf("STARTTLS: %w", err)
			}
		} else if !loopback(s.host) {
			return errors.New("the server offers no STARTTLS, and TLS is required except to a loopback address")
		}
	}
	if s.user == "" {
		return nil
	}
	if ok, _ := c.Extension("AUTH"); !ok {
		return errors.New("the URL has a user but the server offers no AUTH")
	}
	// PLAIN refuses to send the password in clear text to anything but localhost.
	return c.Auth(smtp.PlainAuth("", s.user, s.password, s.host))
}

func (s *SMTP) definite(step string, err error, m otp.Message) error {
	return fmt.Errorf("%s: %s: %s: %w", s.name, step, mask(err.Error(), m), otp.ErrNotDelivered)
}

// mask keeps the code out of errors, should a server quote the message back.
func mask(s string, m otp.Message) string {
	if m.Code != "" {
		s = strings.ReplaceAll(s, m.Code, "***")
	}
	return s
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return "localhost"
}

// redact drops the password from an SMTP URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "[unparsable]"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}
