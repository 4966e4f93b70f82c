package spend_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
)

func newAdmin(t *testing.T) (*spend.Admin, *inmem.Store) {
	t.Helper()
	store := inmem.New()
	r := spend.NewReloader(store, nil, spend.DefaultConfig(), slog.New(slog.DiscardHandler))
	if err := r.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return spend.NewAdmin(store, r), store
}

func TestEditConfig(t *testing.T) {
	t.Run("AnEditsErrorAndABadResultChangeNothing", func(t *testing.T) {
		a, store := newAdmin(t)
		gone := errors.New("gone")
		if _, _, err := a.EditConfig(t.Context(), func(c spend.Config) (spend.Config, error) { return c, gone }, "test"); !errors.Is(err, gone) {
			t.Errorf("edit's error: got %v, want it as it is", err)
		}
		_, _, err := a.EditConfig(t.Context(), func(c spend.Config) (spend.Config, error) {
			c.Prices[0].Price = "-1"
			return c, nil
		}, "test")
		var invalid *otp.ErrInvalidRequest
		if !errors.As(err, &invalid) || invalid.Fields["prices[0].price"] == "" {
			t.Errorf("bad price: got %v, want prices[0].price named", err)
		}
		if _, v, _ := a.Config(t.Context()); v != 0 || a.Running().Version != 0 {
			t.Errorf("stored version %d, running %d: want nothing stored", v, a.Running().Version)
		}
		if actions, _ := store.AdminActions(t.Context(), 0); len(actions) != 0 {
			t.Errorf("audit: got %+v, want nothing", actions)
		}
	})

	t.Run("AuditsTheWholeConfigurationBeforeAndAfter", func(t *testing.T) {
		a, store := newAdmin(t)
		c, v, err := a.EditConfig(t.Context(), func(c spend.Config) (spend.Config, error) {
			c.Currency = "EUR"
			c.Budgets = append(c.Budgets, spend.Budget{Name: "all", Daily: "1", Mode: rate.BudgetEnforce})
			return c, nil
		}, "operator ana")
		if err != nil || v != 1 || a.Running().Version != 1 || c.Currency != "EUR" {
			t.Fatalf("got %+v at %d (running %d), %v", c, v, a.Running().Version, err)
		}
		actions, _ := store.AuditLog(t.Context(), history.AuditFilter{Action: spend.ActionConfigChanged})
		if len(actions) != 1 {
			t.Fatalf("audit: got %+v", actions)
		}
		var was, is spend.Config
		if json.Unmarshal([]byte(actions[0].Before), &was) != nil || json.Unmarshal([]byte(actions[0].After), &is) != nil ||
			was.Currency != "USD" || len(was.Budgets) != 0 || is.Currency != "EUR" || len(is.Budgets) != 1 || len(is.Prices) != len(was.Prices) {
			t.Errorf("before %q, after %q: want the defaults, then EUR with the budget", actions[0].Before, actions[0].After)
		}
	})

	t.Run("EditsAtOnceEachSeeTheOthers", func(t *testing.T) {
		a, _ := newAdmin(t)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				_, _, err := a.EditConfig(t.Context(), func(c spend.Config) (spend.Config, error) {
					c.Budgets = append(c.Budgets, spend.Budget{Name: fmt.Sprintf("b%d", i), Daily: "1", Mode: rate.BudgetAlert})
					return c, nil
				}, "test")
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if c, v, _ := a.Config(t.Context()); len(c.Budgets) != 20 || v != 20 {
			t.Errorf("got %d budgets at version %d, want all 20", len(c.Budgets), v)
		}
	})
}
