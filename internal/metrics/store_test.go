package metrics

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
)

// beginSend is a valid send of one code to phone.
func beginSend(phone string, now time.Time) otp.BeginSend {
	return otp.BeginSend{
		Phone: phone, Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "test",
		Now: now, TTL: 5 * time.Minute, MaxSends: 1, MaxAttempts: 5,
		NewVerificationID: uuid.NewString(), SendID: uuid.NewString(),
		CodeHash: func(string) []byte { return []byte("hash") },
	}
}

func TestStoreMetrics(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()

	t.Run("AnswersAreOkAndMisuseIsAnError", func(t *testing.T) {
		m := New()
		s := m.Store(inmem.New())
		first := beginSend("+819012345678", now)
		start, err := s.BeginSend(ctx, first)
		if err != nil {
			t.Fatalf("begin send: %v", err)
		}
		p := beginSend("+819012345678", now)
		if err := s.FinishSend(ctx, otp.FinishSend{
			SendID: first.SendID, VerificationID: start.Verification.ID, Status: otp.SendSent, Now: now,
		}); err != nil {
			t.Fatalf("finish send: %v", err)
		}
		p.SendID = "not-a-uuid"
		if _, err := s.BeginSend(ctx, p); err == nil || errors.Is(err, otp.ErrUnavailable) {
			t.Fatalf("begin send with a bad id: got %v, want an error that is not unavailable", err)
		}
		var budget *otp.ErrSendBudget
		if _, err := s.BeginSend(ctx, beginSend("+819012345678", now)); !errors.As(err, &budget) {
			t.Fatalf("second send: got %v, want *otp.ErrSendBudget", err)
		}
		if v, err := s.Verification(ctx, start.Verification.ID); err != nil || v.ID != start.Verification.ID {
			t.Fatalf("verification: got %v %v, want %s", v.ID, err, start.Verification.ID)
		}
		if _, err := s.Verification(ctx, uuid.NewString()); !errors.Is(err, otp.ErrNotFound) {
			t.Fatalf("unknown verification: got %v, want otp.ErrNotFound", err)
		}
		_, _, err = s.Check(ctx, otp.CheckRef{Phone: "+819099999999", Now: now},
			func(v otp.Verification) (otp.Verification, otp.CheckOutcome) { return v, otp.OutcomeApproved })
		if !errors.Is(err, otp.ErrNotFound) {
			t.Fatalf("check of an unknown phone: got %v, want otp.ErrNotFound", err)
		}
		for _, c := range []struct {
			op, result string
			want       uint64
		}{
			{"begin_send", "ok", 2},
			{"begin_send", "error", 1},
			{"finish_send", "ok", 1},
			{"verification", "ok", 2},
			{"check", "ok", 1},
		} {
			if got := observations(t, m, "otpgate_store_duration_seconds", "op", c.op, "result", c.result); got != c.want {
				t.Errorf("%s %s: got %v, want %v", c.op, c.result, got, c.want)
			}
		}
	})

	t.Run("ClosedDatabaseIsUnavailable", func(t *testing.T) {
		pool, err := postgres.Open(ctx, testenv.PostgresDSN(t))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		pool.Close()
		m := New()
		s := m.Store(postgres.New(pool, testenv.DataKeys()))
		if _, err := s.BeginSend(ctx, beginSend("+819012345678", now)); !errors.Is(err, otp.ErrUnavailable) {
			t.Fatalf("got %v, want an error wrapping otp.ErrUnavailable", err)
		}
		if got := observations(t, m, "otpgate_store_duration_seconds", "op", "begin_send", "result", "unavailable"); got != 1 {
			t.Errorf("got %v, want 1", got)
		}
	})
}
