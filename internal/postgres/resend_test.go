package postgres_test

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
)

// TestResendRoundTrips holds what a resend costs: one statement in one round trip when the
// caller names the pending verification, two when it names none or a stale one.
func TestResendRoundTrips(t *testing.T) {
	ctx := context.Background()
	pool, w := mustOpenCounted(t)
	s := postgres.New(pool, testenv.DataKeys())
	now := time.Date(2030, 3, 4, 5, 0, 0, 0, time.UTC)
	send := func(phone string, at time.Time, seen *otp.Verification) (otp.SendStart, int64, int64) {
		t.Helper()
		w.reset()
		st, err := s.BeginSend(ctx, otp.BeginSend{
			Phone: phone, Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "test",
			Now: at, TTL: 5 * time.Minute, MaxSends: 10, MaxAttempts: 3,
			NewVerificationID: events.NewID(), SendID: events.NewID(), CodeHash: func(id string) []byte { return []byte(id) },
			Seen: seen,
		})
		if err != nil {
			t.Fatalf("BeginSend: %v", err)
		}
		return st, w.statements.Load(), w.trips.Load()
	}
	// The first send prepares the statement on the connection, which costs a round trip once.
	first, _, _ := send("+819012345678", now, nil)
	other, _, _ := send("+819087654321", now, nil)
	// A send that replaces an expired verification the caller remembered.
	replaced, _, _ := send("+819087654321", now.Add(5*time.Minute), &other.Verification)
	for _, c := range []struct {
		name                string
		phone               string
		at                  time.Duration
		seen                *otp.Verification
		wantID              string
		wantStmts, wantTrip int64
	}{
		{"Remembered", "+819012345678", time.Minute, &first.Verification, first.Verification.ID, 1, 1},
		{"NotRemembered", "+819012345678", 2 * time.Minute, nil, first.Verification.ID, 2, 2},
		{"RememberedButReplaced", "+819087654321", 6 * time.Minute, &other.Verification, replaced.Verification.ID, 2, 2},
	} {
		st, stmts, trips := send(c.phone, now.Add(c.at), c.seen)
		if st.Created || st.Verification.ID != c.wantID {
			t.Errorf("%s: got %+v, want a resend counted on %s", c.name, st, c.wantID)
		}
		if stmts != c.wantStmts || trips != c.wantTrip {
			t.Errorf("%s: got %d statements in %d round trips, want %d in %d", c.name, stmts, trips, c.wantStmts, c.wantTrip)
		}
	}
	if !replaced.Created {
		t.Errorf("send after expiry: got %+v, want a new verification", replaced)
	}
}
