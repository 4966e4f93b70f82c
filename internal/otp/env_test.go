package otp_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

const (
	testPhone = "+819012345678"
	testIP    = "192.0.2.1"
	otherIP   = "198.51.100.7"
)

// codes are the digits the service draws, in order, one per admitted send.
var codes = []string{"123456", "234567", "345678", "456789", "567890", "678901"}

// errUnavailable is a backing-service failure as the real limiter and stores report it.
var errUnavailable = fmt.Errorf("fake: connection refused: %w", otp.ErrUnavailable)

// env is a service on in-memory fakes, with a fixed clock, ids and code digits.
type env struct {
	svc     *otp.Service
	cfg     otp.Config
	clock   *clock
	limiter *fakeLimiter
	store   *faultyStore
	sender  *fakeSender
	denied  *fakeDenied
}

// newEnv builds the service the tests use; configure changes its settings first.
func newEnv(t *testing.T, configure ...func(*otp.Config)) *env {
	t.Helper()
	cfg := otp.Config{
		Secret: []byte("test secret of the unit tests"), CodeLength: 6, CodeTTL: 5 * time.Minute,
		MaxSends: 5, MaxAttempts: 3,
		PhoneRules:      []rate.Rule{{Limit: 1, Window: time.Minute}},
		IPRules:         []rate.Rule{{Limit: 10, Window: time.Hour}},
		DuplicateWindow: 5 * time.Second,
		CheckPhoneRules: []rate.Rule{{Limit: 5, Window: time.Minute}},
		CheckIPRules:    []rate.Rule{{Limit: 20, Window: time.Minute}},
		SMSTimeout:      time.Second, LimiterTimeout: time.Second, StoreTimeout: time.Second,
	}
	for _, f := range configure {
		f(&cfg)
	}
	e := &env{
		clock:   &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)},
		limiter: &fakeLimiter{},
		store:   &faultyStore{Store: inmem.New()},
		sender:  &fakeSender{ProviderID: "SM-fake"},
		denied:  &fakeDenied{},
	}
	e.store.Store.Now = e.clock.Now
	e.cfg = cfg
	e.svc = otp.NewService(cfg, e.store, e.limiter, e.sender, mustRenderer(t), e.denied, slog.New(slog.DiscardHandler))
	e.svc.Now = e.clock.Now
	var n int
	e.svc.NewID = func() string { n++; return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }
	e.svc.Rand = codeReader(codes...)
	return e
}

// otherInstance is a second service on the same store, limiter and sender, as another
// server instance is: it has seen none of e.svc's verifications.
func (e *env) otherInstance(t *testing.T) *otp.Service {
	t.Helper()
	svc := otp.NewService(e.cfg, e.store, e.limiter, e.sender, mustRenderer(t), e.denied, slog.New(slog.DiscardHandler))
	svc.Now, svc.NewID, svc.Rand = e.svc.Now, e.svc.NewID, e.svc.Rand
	return svc
}

// send sends to testPhone from testIP and fails the test on an error.
func (e *env) send(t *testing.T) otp.SendResult {
	t.Helper()
	res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP})
	if err != nil {
		t.Fatalf("send: got %v, want none", err)
	}
	return res
}

// check checks code for testPhone from testIP.
func (e *env) check(code string) (otp.CheckResult, error) {
	return e.svc.Check(context.Background(), otp.CheckInput{Phone: testPhone, Code: code, ClientIP: testIP})
}

// verification is the stored state of a verification, as the console would show it.
func (e *env) verification(t *testing.T, id string) otp.Verification {
	t.Helper()
	d, err := e.store.VerificationDetail(context.Background(), id)
	if err != nil {
		t.Fatalf("verification %s: %v", id, err)
	}
	return d.Verification
}

// sendRow is the history row of a send, by its id (which is also its message's).
func (e *env) sendRow(t *testing.T, id string) history.SendRow {
	t.Helper()
	r, err := e.store.Send(context.Background(), id)
	if err != nil {
		t.Fatalf("send row %s: %v", id, err)
	}
	return r
}

// codeReader is a Rand that makes the service draw exactly the given 6-digit codes,
// then fails: a draw reads 8 bytes, a big-endian number kept modulo 10^6 (newCode).
func codeReader(codes ...string) io.Reader {
	var b []byte
	for _, c := range codes {
		v, err := strconv.Atoi(c)
		if err != nil || len(c) != 6 {
			panic("codeReader takes 6-digit codes, got " + c)
		}
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	return bytes.NewReader(b)
}

// clock is the service's clock, moved by the test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// wantUntouched fails the test when the service asked the limiter, the store or the
// sender anything, or recorded a refusal.
func (e *env) wantUntouched(t *testing.T) {
	t.Helper()
	if got := e.limiter.Allows(); len(got) != 0 {
		t.Errorf("limiter asked: got %v, want no call", got)
	}
	for _, m := range []string{"BeginSend", "FinishSend", "Verification", "Newest", "Check"} {
		if got := e.store.Calls(m); got != 0 {
			t.Errorf("store %s: got %d calls, want 0", m, got)
		}
	}
	if got := e.sender.Messages(); len(got) != 0 {
		t.Errorf("sent: got %v, want nothing", got)
	}
	if got := e.denied.Got(); len(got) != 0 {
		t.Errorf("denied records: got %v, want none", got)
	}
}

// wantBadInput checks a refusal of malformed input: an *otp.ErrInvalidRequest with exactly
// wantFields, or, when wantFields is nil, an *contact.ErrInvalidPhone.
func wantBadInput(t *testing.T, err error, wantFields map[string]string) {
	t.Helper()
	var invalid *otp.ErrInvalidRequest
	var phone *contact.ErrInvalidPhone
	switch {
	case wantFields != nil && !errors.As(err, &invalid):
		t.Errorf("got %v, want *otp.ErrInvalidRequest", err)
	case wantFields != nil && !reflect.DeepEqual(invalid.Fields, wantFields):
		t.Errorf("fields: got %v, want %v", invalid.Fields, wantFields)
	case wantFields == nil && !errors.As(err, &phone):
		t.Errorf("got %v, want *contact.ErrInvalidPhone", err)
	}
}
