package sms

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"otpgate/internal/otp"
)

func TestSnippet(t *testing.T) {
	body := "Your code is 483920. It expires in 5 minutes."
	for _, tc := range []struct {
		name, in, want string
	}{
		{"KeepsShortText", "number blocked", "number blocked"},
		{"FoldsControlsAndSpace", "a\r\n\tb\x00c   d", "a b c d"},
		{"ReplacesBadUTF8", "ok\xffok", "ok?ok"},
		{"MasksAnEchoedBody", `{"body":"` + body + `"}`, `{"body":"[message]"}`},
		{"MasksTheCodeAlone", "code 483920 rejected", "code *** rejected"},
		{"KeepsShortNumbers", "error 5 of 12", "error 5 of 12"},
		{"CutsLongTextOnARune", strings.Repeat("あ", 100), strings.Repeat("あ", 66) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := snippet(tc.in, body); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name     string
		err      error
		definite bool
	}{
		{"DialRefusedIsDefinite", refused, true},
		{"DNSFailureIsDefinite", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.invalid"}}, true},
		{"BadCertificateIsDefinite", &tls.CertificateVerificationError{Err: errors.New("unknown authority")}, true},
		{"TLSToPlainHTTPIsDefinite", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
		{"ResetAfterWriteIsUnknown", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, false},
		{"EOFIsUnknown", io.ErrUnexpectedEOF, false},
		{"DeadlineIsUnknown", context.DeadlineExceeded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := transportError("p", &url.Error{Op: "Post", URL: "https://user:pw@host/?token=tk", Err: tc.err})
			if got := errors.Is(err, otp.ErrNotDelivered); got != tc.definite {
				t.Errorf("%v: definite got %v, want %v", err, got, tc.definite)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("%v: does not wrap %v", err, tc.err)
			}
			if strings.Contains(err.Error(), "tk") || strings.Contains(err.Error(), "pw") {
				t.Errorf("%v: shows the URL's credentials", err)
			}
		})
	}
}

func TestStatusError(t *testing.T) {
	for _, tc := range []struct {
		status   int
		definite bool
	}{
		{301, true}, {307, true}, {400, true}, {429, true}, {499, true},
		{500, false}, {503, false}, {599, false}, {600, false}, {199, false},
	} {
		err := statusError("p", reply{status: tc.status}, "detail")
		if got := errors.Is(err, otp.ErrNotDelivered); got != tc.definite {
			t.Errorf("status %d: definite got %v, want %v", tc.status, got, tc.definite)
		}
	}
}
