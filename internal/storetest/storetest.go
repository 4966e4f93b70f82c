// Package storetest is the behaviour every otp.Store must show, as one suite that
// internal/postgres and internal/inmem both run, so that dev mode and production
// cannot drift apart in what both do. What only some stores do (Capabilities) runs for
// those that do it.
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/spend"
	"otpgate/internal/totp"
)

// Stores is one implementation under test, fresh and empty. What Store can do beyond
// what every store must, it says by the interfaces it implements (Capabilities).
type Stores struct {
	Store   otp.Store
	History history.Store
	Denied  otp.DeniedRecorder
	// Receipts records delivery receipts on the sends of Store.
	Receipts receipt.Store
	Apps     apps.Store
	// Flush makes what Denied recorded, and outcomes that Store.FinishSend queued, visible
	// to History.
	Flush func(ctx context.Context) error
	// SetClock replaces the clock History reads (expiry labels, the end of Stats).
	SetClock func(now func() time.Time)
	// Fraud is the same store as a fraud.Store.
	Fraud fraud.Store
	// Events is the same store as an events.Store.
	Events events.Store
	// Spend is the same store as a spend.Store.
	Spend spend.Store
	// TOTP is the same store as a totp.Store.
	TOTP totp.Store
	// Operators is the same store as an operators.Store.
	Operators operators.Store
}

// Run runs the whole suite; newStore is called once per subtest. The cases of a capability
// the store lacks are skipped, each naming it.
func Run(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("Send", func(t *testing.T) { testSend(t, newStore) })
	t.Run("Resend", func(t *testing.T) { testResend(t, newStore) })
	t.Run("FinishSend", func(t *testing.T) { testFinish(t, newStore) })
	t.Run("Settle", func(t *testing.T) { testSettle(t, newStore) })
	t.Run("Check", func(t *testing.T) { testCheck(t, newStore) })
	t.Run("Newest", func(t *testing.T) { testNewest(t, newStore) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, newStore) })
	t.Run("History", func(t *testing.T) { testHistory(t, newStore) })
	t.Run("Pagination", func(t *testing.T) { testPagination(t, newStore) })
	t.Run("Stats", func(t *testing.T) { testStats(t, newStore) })
	t.Run("Admin", func(t *testing.T) { testAdmin(t, newStore) })
	t.Run("Receipts", func(t *testing.T) { testReceipts(t, newStore) })
	t.Run("Delivery", func(t *testing.T) { testDelivery(t, newStore) })
	t.Run("AppScope", func(t *testing.T) { testAppScope(t, newStore) })
	t.Run("Apps", func(t *testing.T) { testApps(t, newStore) })
	t.Run("AppsNumbers", func(t *testing.T) { testAppsNumbers(t, newStore) })
	t.Run("Fraud", func(t *testing.T) { testFraud(t, newStore) })
	t.Run("FraudExplained", func(t *testing.T) { testFraudExplained(t, newStore) })
	t.Run("Spend", func(t *testing.T) { testSpend(t, newStore) })
	t.Run("SpendConfig", func(t *testing.T) { testSpendConfig(t, newStore) })
	t.Run("Settings", func(t *testing.T) { testSettings(t, newStore) })
	t.Run("SpendFigures", func(t *testing.T) { testSpendFigures(t, newStore) })
	t.Run("Events", func(t *testing.T) { testEvents(t, newStore) })
	t.Run("Retention", func(t *testing.T) { testRetention(t, newStore) })
	t.Run("Attempts", func(t *testing.T) { testAttempts(t, newStore) })
	t.Run("Text", func(t *testing.T) { testText(t, newStore) })
	t.Run("TOTP", func(t *testing.T) { testTOTP(t, newStore) })
	t.Run("PSD2", func(t *testing.T) { testPSD2(t, newStore) })
	t.Run("RateLimits", func(t *testing.T) { testRateLimits(t, newStore) })
	t.Run("Operators", func(t *testing.T) { testOperators(t, newStore) })
	t.Run("Audit", func(t *testing.T) { testAudit(t, newStore) })
	t.Run("Erase", func(t *testing.T) { testErase(t, newStore) })
	t.Run("Traces", func(t *testing.T) { testTraces(t, newStore) })
	t.Run("Addresses", func(t *testing.T) { testAddresses(t, newStore) })
}

const (
	ttl         = 5 * time.Minute
	maxSends    = 3
	maxAttempts = 5
)

// base is the suite's "now"; a fixed time keeps stored and expected times exact.
func base() time.Time { return time.Date(2030, 3, 4, 5, 0, 0, 0, time.UTC) }

// env is one subtest's store with its history clock.
type env struct {
	Stores
	t   *testing.T
	ctx context.Context

	mu  sync.Mutex
	now time.Time
}

func newEnv(t *testing.T, newStore func(t *testing.T) Stores) *env {
	t.Helper()
	t.Parallel()
	e := &env{Stores: newStore(t), t: t, ctx: t.Context(), now: base()}
	e.SetClock(e.clock)
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) setClock(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = t
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// codeHash stands in for the service's HMAC of a code, which otp keeps to itself: tied to
// the verification id, as the real one is. A store only keeps and returns these bytes, so
// the suite needs no more; params and codeAt are its only users.
func codeHash(verificationID, code string) []byte {
	h := sha256.Sum256([]byte(verificationID + "|" + code))
	return h[:]
}

// codeAt is the index of code's hash among v's code hashes, or -1: the one comparison of
// the suite, for its decisions and for its checks of what a store kept.
func codeAt(v otp.Verification, code string) int {
	return slices.IndexFunc(v.CodeHashes, func(h []byte) bool { return bytes.Equal(h, codeHash(v.ID, code)) })
}

// params is a send of code to phone at time at, with the suite's limits.
func params(phone, code string, at time.Time) otp.BeginSend {
	return otp.BeginSend{
		Phone: phone, Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "test",
		Now: at, TTL: ttl, MaxSends: maxSends, MaxAttempts: maxAttempts,
		NewVerificationID: newID(), SendID: newID(),
		CodeHash: func(id string) []byte { return codeHash(id, code) },
	}
}

// send begins a send and fails the test on error.
func (e *env) send(p otp.BeginSend) otp.SendStart {
	e.t.Helper()
	st, err := e.Store.BeginSend(e.ctx, p)
	if err != nil {
		e.t.Fatalf("BeginSend(%s): %v", p.Phone, err)
	}
	return st
}

// decideCode is a decision like the service's: it approves a matching code of a
// pending, unexpired verification and counts a wrong one against the budget.
func decideCode(code string, now time.Time) func(otp.Verification) (otp.Verification, otp.CheckOutcome) {
	return func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
		switch {
		case v.Status == otp.StatusFailed:
			return v, otp.OutcomeTooManyAttempts
		case v.Status == otp.StatusExpired:
			return v, otp.OutcomeExpired
		case v.Status != otp.StatusPending:
			return v, otp.OutcomeNotPending
		case !now.Before(v.ExpiresAt):
			v.Status = otp.StatusExpired
			return v, otp.OutcomeExpired
		case v.Attempts >= v.MaxAttempts:
			v.Status = otp.StatusFailed
			return v, otp.OutcomeTooManyAttempts
		}
		if codeAt(v, code) >= 0 {
			v.Status, v.ClosedAt = otp.StatusApproved, now
			return v, otp.OutcomeApproved
		}
		if v.Attempts++; v.Attempts >= v.MaxAttempts {
			v.Status = otp.StatusFailed
		}
		return v, otp.OutcomeInvalidCode
	}
}

// check runs one check of code by id and fails the test on error.
func (e *env) check(id, code string, at time.Time) (otp.Verification, otp.CheckOutcome) {
	e.t.Helper()
	v, oc, err := e.Store.Check(e.ctx, otp.CheckRef{ID: id, ClientIP: "198.51.100.7", Now: at}, decideCode(code, at))
	if err != nil {
		e.t.Fatalf("Check(%s): %v", id, err)
	}
	return v, oc
}

func (e *env) verification(id string) otp.Verification {
	e.t.Helper()
	v, err := e.Store.Verification(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Verification(%s): %v", id, err)
	}
	return v
}

func (e *env) sendRow(id string) history.SendRow {
	e.t.Helper()
	r, err := e.History.Send(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Send(%s): %v", id, err)
	}
	return r
}

func (e *env) flush() {
	e.t.Helper()
	if err := e.Flush(e.ctx); err != nil {
		e.t.Fatalf("Flush: %v", err)
	}
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, otp.ErrNotFound) {
		t.Errorf("%s: got error %v, want ErrNotFound", what, err)
	}
}

func wantInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	var inv *otp.ErrInvalidRequest
	if !errors.As(err, &inv) || inv.Fields[field] == "" {
		t.Errorf("%s: got error %v, want ErrInvalidRequest naming %q", what, err, field)
	}
}
