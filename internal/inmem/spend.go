package inmem

import (
	"context"
	"fmt"
	"slices"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/spend"
)

var _ spend.Store = (*Store)(nil)

// spendState is the spend configuration as stored, and its version.
type spendState struct {
	config  []byte
	version int64
}

// SpendConfig implements spend.Store.
func (s *Store) SpendConfig(ctx context.Context) ([]byte, int64, error) {
	if err := alive("spend config", ctx); err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.spend.config), s.spend.version, nil
}

// SpendVersion implements spend.Store.
func (s *Store) SpendVersion(ctx context.Context) (int64, error) {
	if err := alive("spend version", ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spend.version, nil
}

// UpdateSpendConfig implements spend.Store.
func (s *Store) UpdateSpendConfig(ctx context.Context, update func([]byte) ([]byte, history.AdminAction, error)) (int64, error) {
	if err := alive("update spend config", ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, a, err := update(slices.Clone(s.spend.config))
	if err != nil {
		return 0, err
	}
	if err := a.Validate(); err != nil {
		return 0, fmt.Errorf("inmem: update spend config: %w", err)
	}
	s.spend.config = slices.Clone(next)
	s.spend.version++
	s.audit(a)
	return s.spend.version, nil
}

// RecordBudgetThreshold implements spend.Store.
func (s *Store) RecordBudgetThreshold(ctx context.Context, key string, d events.BudgetThresholdData, at time.Time) error {
	if err := alive("record budget threshold", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(d.AppID, events.BudgetThreshold, key, "", d, at)
	return nil
}
