// Package sms holds the SMS senders behind otp.Sender: Log for dev mode, Webhook
// for a receiver of your own, and the vendors' APIs (Twilio, Telnyx, Infobip, Amazon
// SNS, Vonage, Plivo, Sinch), with the readers of their delivery receipts.
//
// The HTTP senders sort failures by what the caller may conclude from them:
//   - 2xx: delivered to the provider.
//   - 3xx and 4xx: definite failure, the error wraps otp.ErrNotDelivered. The
//     provider answered without taking the message (this includes 429). Redirects
//     are never followed, because a POST that follows a 301/302 turns into a GET
//     and would be read as delivered.
//   - A failure to open the connection (refused, DNS, unreachable, TLS certificate
//     or handshake garbage): definite too. No byte of the HTTP request left this
//     process, so the receiver cannot have acted on it.
//   - Everything else (5xx, timeouts, a connection cut after it was open): unknown.
//     The receiver may have read the request and sent the SMS, so the error does not
//     wrap otp.ErrNotDelivered and the caller must not refund or assume it is lost.
package sms

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"otpgate/internal/otp"
)

const (
	// DefaultTimeout is the client-side backstop per call; the caller's ctx
	// (SMS_TIMEOUT) normally ends a slow call long before it.
	DefaultTimeout = 10 * time.Second

	// maxReply bounds how much of a reply body is read; more than enough for any
	// provider's JSON, small enough that a hostile receiver cannot exhaust memory.
	maxReply = 64 << 10
	// maxDrain bounds what is discarded after that so the connection can be reused.
	maxDrain = 64 << 10
	// maxSnippet bounds the part of a reply body quoted in an error.
	maxSnippet = 200
)

// maxIdlePerHost is how many idle connections a sender keeps to its provider. Go's default
// of two makes a busy server open (and close) a connection for nearly every SMS.
const maxIdlePerHost = 64

// newClient returns the client a sender uses: the given one (or a new one, with a
// transport of its own that keeps maxIdlePerHost connections to the provider) with
// redirects turned off and a Timeout backstop when it has none.
func newClient(c *http.Client, timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var out http.Client
	if c != nil {
		out = *c
	} else if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		tr := dt.Clone()
		tr.MaxIdleConnsPerHost = maxIdlePerHost
		tr.MaxIdleConns = max(tr.MaxIdleConns, maxIdlePerHost)
		out.Transport = tr
	}
	if out.Timeout <= 0 {
		out.Timeout = timeout
	}
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &out
}

// reply is what came back from a provider.
type reply struct {
	status   int
	location string
	body     []byte // at most maxReply bytes
}

// do sends req and reads a bounded part of the reply, always draining and closing
// its body. Transport errors are returned as they are; see transportError.
func do(c *http.Client, req *http.Request) (reply, error) {
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		// The status line arrived, so the provider has the request: delivery is
		// still decided by the status, only the body is incomplete.
		body = nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	return reply{status: resp.StatusCode, location: resp.Header.Get("Location"), body: body}, nil
}

// transportError wraps an error of http.Client.Do. It wraps otp.ErrNotDelivered
// only when the request cannot have reached the receiver: the connection was never
// established. The URL is left out because it may carry credentials.
func transportError(provider string, err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	if notSent(err) {
		return fmt.Errorf("%s: connect: %w: %w", provider, otp.ErrNotDelivered, err)
	}
	return fmt.Errorf("%s: post (delivery unknown): %w", provider, err)
}

// notSent reports whether err happened before any connection to the receiver
// existed. Go's transport re-sends a POST on a fresh connection only when nothing
// was written on the old one, so a dial error also means no earlier attempt got out.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var cert *tls.CertificateVerificationError
	if errors.As(err, &cert) {
		return true
	}
	var rec tls.RecordHeaderError
	return errors.As(err, &rec)
}

// statusError turns a non-2xx reply into an error; detail is the provider's own
// explanation. 5xx and odd statuses are unknown, the rest definite.
func statusError(provider string, r reply, detail string) error {
	switch {
	case r.status >= 300 && r.status < 400:
		return fmt.Errorf("%s: status %d, redirect to %q not followed: %w",
			provider, r.status, snippet(redactURL(r.location), ""), otp.ErrNotDelivered)
	case r.status >= 400 && r.status < 500:
		return fmt.Errorf("%s: status %d: %s: %w", provider, r.status, detail, otp.ErrNotDelivered)
	default:
		return fmt.Errorf("%s: status %d (delivery unknown): %s", provider, r.status, detail)
	}
}

// replyDetail quotes a reply body for an error; body is the message that was sent.
func replyDetail(reply []byte, body string) string {
	if s := snippet(string(reply), body); s != "" {
		return "reply: " + s
	}
	return "empty reply"
}

// digitRun finds the runs of digits that could be a code.
var digitRun = regexp.MustCompile(`\p{Nd}{4,}`)

// snippet makes a short, single-line, printable quote of a reply for an error.
// A receiver that echoes the request would put the code into our errors (and so
// into history and logs): every long digit run of body, the message sent, is masked.
func snippet(s, body string) string {
	if body != "" {
		s = strings.ReplaceAll(s, body, "[message]")
		for _, run := range digitRun.FindAllString(body, -1) {
			s = strings.ReplaceAll(s, run, "***")
		}
	}
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxSnippet {
		return s
	}
	cut := maxSnippet
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
