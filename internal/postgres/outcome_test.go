package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

// begin writes n sends as sending, for distinct phones, at at.
func begin(t *testing.T, s *postgres.Store, n int, at time.Time) []otp.BeginSend {
	t.Helper()
	out := make([]otp.BeginSend, n)
	for i := range out {
		p := otp.BeginSend{
			Phone: fmt.Sprintf("+8190%08d", i), Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "test",
			Now: at, TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5,
			NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: uuid.Must(uuid.NewV7()).String(),
			CodeHash: func(string) []byte { return []byte("h") },
		}
		if _, err := s.BeginSend(context.Background(), p); err != nil {
			t.Fatalf("BeginSend: %v", err)
		}
		out[i] = p
	}
	return out
}

func sent(p otp.BeginSend) otp.FinishSend {
	return otp.FinishSend{SendID: p.SendID, Status: otp.SendSent, ProviderID: "pm-" + p.Phone, Now: p.Now.Add(time.Second)}
}

func TestOutcomeWriter(t *testing.T) {
	t.Run("OutcomesOfManySendsTakeAFewStatements", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		s.Outcomes = stores.StartOutcomes(t, pool, postgres.BatchOptions{})
		sends := begin(t, s, 500, time.Now().UTC())
		var wg sync.WaitGroup
		for g := range 10 { // ten request handlers at once
			wg.Go(func() {
				for _, p := range sends[g*50 : (g+1)*50] {
					if err := s.FinishSend(t.Context(), sent(p)); err != nil {
						t.Errorf("FinishSend: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if err := s.Outcomes.Flush(t.Context()); err != nil {
			t.Fatalf("Flush: %v", err)
		}
		if n := count(t, pool, `SELECT count(*) FROM sends WHERE status = 'sent' AND provider_message_id LIKE 'pm-%'`); n != 500 {
			t.Errorf("got %d sent rows, want 500", n)
		}
		// Each statement is one transaction, so the writing statements are the distinct xmins.
		statements := count(t, pool, `SELECT count(DISTINCT xmin::text) FROM sends`)
		if statements > 20 || s.Outcomes.Written() != 500 || s.Outcomes.Lost() != 0 {
			t.Errorf("got %d statements, written %d, lost %d; want at most 20, 500, 0", statements, s.Outcomes.Written(), s.Outcomes.Lost())
		}
		t.Logf("500 outcomes written in %d statements (%d batches)", statements, s.Outcomes.Batches())
	})

	t.Run("FullQueueWritesAtOnce", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		s.Outcomes = postgres.NewOutcomeWriter(pool, discard(), postgres.BatchOptions{QueueSize: 1})
		sends := begin(t, s, 2, time.Now().UTC())
		for _, p := range sends { // nothing drains the queue: Run is not running
			if err := s.FinishSend(t.Context(), sent(p)); err != nil {
				t.Fatalf("FinishSend: %v", err)
			}
		}
		if n := count(t, pool, `SELECT count(*) FROM sends WHERE status = 'sent'`); n != 1 || s.Outcomes.QueueDepth() != 1 {
			t.Errorf("got %d sent rows and %d queued, want 1 written at once and 1 queued", n, s.Outcomes.QueueDepth())
		}
		if err := s.Outcomes.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if n := count(t, pool, `SELECT count(*) FROM sends WHERE status = 'sent'`); n != 2 {
			t.Errorf("after Close: got %d sent rows, want 2", n)
		}
	})

	t.Run("UndoIsWrittenAtOnce", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		s.Outcomes = postgres.NewOutcomeWriter(pool, discard(), postgres.BatchOptions{})
		p := begin(t, s, 1, time.Now().UTC())[0]
		f := otp.FinishSend{SendID: p.SendID, Status: otp.SendFailed, Error: "refused", Undo: true, Created: true, Now: p.Now}
		if err := s.FinishSend(t.Context(), f); err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		// Nothing runs the writer, so only a direct write shows.
		if n := count(t, pool, `SELECT count(*) FROM verifications WHERE status = 'canceled'`); n != 1 {
			t.Errorf("got %d canceled verifications, want 1 at once: the next send must find none pending", n)
		}
	})

	t.Run("CloseWritesWhatIsQueued", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		s.Outcomes = postgres.NewOutcomeWriter(pool, discard(), postgres.BatchOptions{FlushInterval: time.Hour})
		done := make(chan error, 1)
		go func() { done <- s.Outcomes.Run(context.Background()) }()
		for _, p := range begin(t, s, 10, time.Now().UTC()) {
			if err := s.FinishSend(t.Context(), sent(p)); err != nil {
				t.Fatalf("FinishSend: %v", err)
			}
		}
		if err := s.Outcomes.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if n := count(t, pool, `SELECT count(*) FROM sends WHERE status = 'sent'`); n != 10 {
			t.Errorf("got %d sent rows, want 10", n)
		}
	})
}
