package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse dsn: %v", err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	pool := stores.OpenPostgresDSN(t, proxy.Via(dsn))
	s := postgres.New(pool, testenv.DataKeys())
	w := stores.StartWriter(t, pool, discard(), postgres.BatchOptions{})
	ctx := t.Context()
	now := time.Now().UTC()
	id := func() string { return uuid.Must(uuid.NewV7()).String() }
	begin := func() otp.BeginSend {
		return otp.BeginSend{
			Phone: "+819012345678", Channel: "sms", Locale: "en", Now: now, TTL: time.Minute, MaxSends: 100, MaxAttempts: 5,
			NewVerificationID: id(), SendID: id(), CodeHash: func(string) []byte { return []byte("h") },
		}
	}
	st, err := s.BeginSend(ctx, begin())
	if err != nil {
		t.Fatalf("BeginSend before the cut: %v", err)
	}
	vid := st.Verification.ID

	proxy.Cut()
	calls := map[string]func() error{
		"BeginSend":  func() error { _, err := s.BeginSend(ctx, begin()); return err },
		"FinishSend": func() error { return s.FinishSend(ctx, otp.FinishSend{SendID: id(), Status: otp.SendSent, Now: now}) },
		"Check": func() error {
			_, _, err := s.Check(ctx, otp.CheckRef{ID: vid, Now: now}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
				t.Error("decide called without a database")
				return v, otp.OutcomeNotPending
			})
			return err
		},
		"Verification":       func() error { _, err := s.Verification(ctx, vid); return err },
		"ListSends":          func() error { _, _, err := s.ListSends(ctx, history.SendFilter{}); return err },
		"Send":               func() error { _, err := s.Send(ctx, id()); return err },
		"VerificationDetail": func() error { _, err := s.VerificationDetail(ctx, vid); return err },
		"Stats":              func() error { _, err := s.Stats(ctx, now.Add(-time.Hour), time.Hour, ""); return err },
		"RecordAdminAction":  func() error { return s.RecordAdminAction(ctx, history.AdminAction{Action: "limit_reset"}) },
		"AdminActions":       func() error { _, err := s.AdminActions(ctx, 10); return err },
		"Ping":               func() error { return s.Ping(ctx) },
		"Open":               func() error { _, err := postgres.Open(ctx, proxy.Via(dsn)); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, otp.ErrUnavailable) || errors.Is(err, otp.ErrNotFound) {
				t.Errorf("got error %v, want ErrUnavailable", err)
			}
		})
	}

	t.Run("DeniedSendsAreDroppedAndCounted", func(t *testing.T) {
		for range 3 {
			w.RecordDenied(otp.DeniedSend{ID: id(), Phone: "+819012345678", Status: otp.SendBlocked, Time: now})
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatalf("Flush: %v", err)
		}
		if w.Dropped() != 3 || w.Written() != 0 {
			t.Errorf("got dropped %d written %d, want 3 and 0", w.Dropped(), w.Written())
		}
	})

	t.Run("StoreRecoversWhenTheDatabaseIsBack", func(t *testing.T) {
		proxy.Restore()
		if _, err := s.Verification(ctx, vid); err != nil {
			t.Errorf("Verification after restore: %v", err)
		}
	})
}

func TestSlowDatabaseIsUnavailable(t *testing.T) {
	pool := stores.OpenPostgres(t)
	s := postgres.New(pool, testenv.DataKeys())
	now := time.Now().UTC()
	st, err := s.BeginSend(t.Context(), otp.BeginSend{
		Phone: "+819012345678", Now: now, TTL: time.Minute, MaxSends: 5, MaxAttempts: 5,
		NewVerificationID: uuid.NewString(), SendID: uuid.NewString(), CodeHash: func(string) []byte { return nil },
	})
	if err != nil {
		t.Fatalf("BeginSend: %v", err)
	}
	// Another transaction holds the row, so the check waits until its deadline.
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM verifications WHERE id = $1 FOR UPDATE`, st.Verification.ID); err != nil {
		t.Fatalf("lock: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	// decide may run on the state as read; what it decides must not be saved past the lock.
	_, _, err = s.Check(ctx, otp.CheckRef{ID: st.Verification.ID, Now: now}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
		v.Attempts++
		return v, otp.OutcomeInvalidCode
	})
	if !errors.Is(err, otp.ErrUnavailable) {
		t.Errorf("got error %v, want ErrUnavailable", err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	v, err := s.Verification(t.Context(), st.Verification.ID)
	if err != nil || v.Attempts != 0 {
		t.Errorf("got attempts %d (%v), want 0: nothing saved", v.Attempts, err)
	}
	if n := count(t, pool, `SELECT count(*) FROM attempts`); n != 0 {
		t.Errorf("got %d attempt rows, want 0", n)
	}
}

// TestTimedOutSendWritesNothing makes a first send wait past its deadline for another
// transaction creating the phone's verification: the send fails as unavailable and, once
// that transaction rolls back, has written nothing — its statement was cancelled in the
// server, not left to go on and commit.
func TestTimedOutSendWritesNothing(t *testing.T) {
	pool := stores.OpenPostgres(t)
	s := postgres.New(pool, testenv.DataKeys())
	now := time.Now().UTC()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer tx.Rollback(context.Background())
	// The row holds the phone as the store keeps it: its index.
	if _, err := tx.Exec(t.Context(), `INSERT INTO verifications (id, phone, channel, locale, status, max_attempts, created_at, expires_at)
		VALUES (gen_random_uuid(), $1, 'sms', 'en', 'pending', 5, now(), now() + interval '1 minute')`, testenv.DataKeys().Index("+819012345678")); err != nil {
		t.Fatalf("insert: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = s.BeginSend(ctx, otp.BeginSend{
		Phone: "+819012345678", Now: now, TTL: time.Minute, MaxSends: 5, MaxAttempts: 5,
		NewVerificationID: uuid.NewString(), SendID: uuid.NewString(), CodeHash: func(string) []byte { return []byte("h") },
	})
	if !errors.Is(err, otp.ErrUnavailable) {
		t.Errorf("got error %v, want ErrUnavailable", err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // a statement left running would finish now
	if n := count(t, pool, `SELECT count(*) FROM sends`) + count(t, pool, `SELECT count(*) FROM verifications`); n != 0 {
		t.Errorf("got %d rows, want none: the timed-out send must write nothing", n)
	}
}
