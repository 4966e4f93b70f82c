package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testConcurrency(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ConcurrentWrongGuessesNeverExceedTheBudget", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		outcomes := checkConcurrently(e, id, "000000", 200)
		if got := outcomes[otp.OutcomeInvalidCode]; got != fixture.MaxAttempts {
			t.Errorf("got %d invalid_code, want %d (outcomes %v)", got, fixture.MaxAttempts, outcomes)
		}
		if got := outcomes[otp.OutcomeTooManyAttempts]; got != 200-fixture.MaxAttempts {
			t.Errorf("got %d too_many_attempts, want %d", got, 200-fixture.MaxAttempts)
		}
		if v := e.Verification(id); v.Attempts != fixture.MaxAttempts || v.Status != otp.StatusFailed {
			t.Errorf("got attempts %d status %s, want %d failed", v.Attempts, v.Status, fixture.MaxAttempts)
		}
	})

	t.Run("ConcurrentCorrectChecksApproveExactlyOnce", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification.ID
		outcomes := checkConcurrently(e, id, "111111", 50)
		if outcomes[otp.OutcomeApproved] != 1 || outcomes[otp.OutcomeNotPending] != 49 {
			t.Errorf("got %v, want 1 approved and 49 not_pending", outcomes)
		}
	})

	t.Run("ConcurrentSendsShareOnePendingVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		results, errs := sendConcurrently(e, 30, fixture.Base(), 100)
		created, ids := 0, map[string]bool{}
		for _, r := range results {
			if r.Created {
				created++
			}
			ids[r.Verification.ID] = true
		}
		if created != 1 || len(ids) != 1 || len(errs) != 0 {
			t.Fatalf("got %d created, %d ids, errors %v; want one verification", created, len(ids), errs)
		}
		for id := range ids {
			if v := e.Verification(id); v.Sends != 30 || len(v.CodeHashes) != 30 {
				t.Errorf("got %d sends and %d codes, want 30 each", v.Sends, len(v.CodeHashes))
			}
		}
	})

	t.Run("ConcurrentSendsStopAtTheSendBudget", func(t *testing.T) {
		e := fixture.New(t, newStore)
		results, errs := sendConcurrently(e, 30, fixture.Base(), fixture.MaxSends)
		if len(results) != fixture.MaxSends || len(errs) != 30-fixture.MaxSends {
			t.Fatalf("got %d sends and %d errors, want %d and %d", len(results), len(errs), fixture.MaxSends, 30-fixture.MaxSends)
		}
		for _, err := range errs {
			var budget *otp.ErrSendBudget
			if !errors.As(err, &budget) {
				t.Errorf("got error %v, want ErrSendBudget", err)
			}
		}
	})

	t.Run("ConcurrentSendsAfterExpiryCreateOneVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		old := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification
		results, errs := sendConcurrently(e, 30, old.ExpiresAt, 100)
		created, ids := 0, map[string]bool{}
		for _, r := range results {
			if r.Created {
				created++
			}
			ids[r.Verification.ID] = true
		}
		if created != 1 || len(ids) != 1 || ids[old.ID] || len(errs) != 0 {
			t.Errorf("got %d created, ids %v, errors %v; want one new verification", created, ids, errs)
		}
	})
}

// checkConcurrently checks code n times at once and counts the outcomes.
func checkConcurrently(e *fixture.Env, id, code string, n int) map[otp.CheckOutcome]int {
	e.T.Helper()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = map[otp.CheckOutcome]int{}
	)
	for range n {
		wg.Go(func() {
			_, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{ID: id, Now: fixture.Base()}, fixture.DecideCode(code, fixture.Base()))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				e.T.Errorf("Check: %v", err)
				return
			}
			outcomes[oc]++
		})
	}
	wg.Wait()
	return outcomes
}

// sendConcurrently begins n sends for one phone at once.
func sendConcurrently(e *fixture.Env, n int, at time.Time, budget int) ([]otp.SendStart, []error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []otp.SendStart
		errs    []error
	)
	for i := range n {
		wg.Go(func() {
			p := fixture.Params("+819012345678", "1000"+string(rune('a'+i%26)), at)
			p.MaxSends = budget
			st, err := e.Store.BeginSend(e.Ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			results = append(results, st)
		})
	}
	wg.Wait()
	return results, errs
}
