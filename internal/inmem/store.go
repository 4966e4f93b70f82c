// Package inmem keeps verifications, sends and attempts in memory for dev mode, and
// implements what dev mode runs, no more: it forgets everything when the process ends, so
// it has no history retention (rollups, purges) and no sends left sending by a stopped
// server to settle. In every case of internal/storetest it runs, it behaves like
// internal/postgres; the cases of what it lacks are skipped.
package inmem

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/persistence"
)

// Store implements otp.Store, history.Store and otp.DeniedRecorder. One mutex
// serialises every operation, which gives each the atomicity of a transaction.
type Store struct {
	mu            sync.Mutex
	verifications map[string]*otp.Verification
	byPhone       map[string][]string // app|phone → its verification ids
	pending       map[string]string   // app|phone → id of its pending verification
	sends         map[string]*history.SendRow
	attempts      []history.Attempt
	attemptSeq    int64
	admin         []history.AdminAction
	// parts are each feature's tables by their type (part), made on first use.
	parts   map[any]any
	dropped atomic.Uint64
	written atomic.Uint64

	// Now is the clock for history labels, stats ranges and undated records; tests replace it.
	Now func() time.Time
}

// Store is every feature's store, and records refused sends itself; a feature whose
// methods it lacks fails the build here.
var (
	_ persistence.Store  = (*Store)(nil)
	_ otp.DeniedRecorder = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{
		verifications: map[string]*otp.Verification{},
		byPhone:       map[string][]string{},
		pending:       map[string]string{},
		sends:         map[string]*history.SendRow{},
		parts:         map[any]any{},
		Now:           func() time.Time { return time.Now().UTC() },
	}
}

// Ping always succeeds; it matches postgres.Store for readiness checks.
func (s *Store) Ping(ctx context.Context) error { return alive("ping", ctx) }

// alive fails like a database call would when ctx has already ended.
func alive(op string, ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inmem: %s: %w: %w", op, otp.ErrUnavailable, err)
	}
	return nil
}

// ts stores times as Postgres does: microseconds, UTC.
func ts(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Microsecond).UTC()
}

// canonID writes a uuid the way Postgres prints it; ok is false for anything else.
func canonID(s string) (string, bool) {
	u, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

func clone(v *otp.Verification) otp.Verification {
	c := *v
	c.CodeHashes = make([][]byte, len(v.CodeHashes))
	for i, h := range v.CodeHashes {
		c.CodeHashes[i] = slices.Clone(h)
	}
	return c
}

// phoneKey is the key of byPhone and pending: verifications are per app and phone.
func phoneKey(appID, phone string) string { return otp.StoredAppID(appID) + "|" + phone }

// newer orders records as Postgres's (created_at, id) ordering does.
func newer(at time.Time, id string, thanAt time.Time, thanID string) bool {
	return at.After(thanAt) || at.Equal(thanAt) && id > thanID
}
