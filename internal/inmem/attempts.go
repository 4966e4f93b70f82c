package inmem

import (
	"context"
	"fmt"
	"slices"

	"otpgate/internal/history"
)

var _ history.AttemptReader = (*Store)(nil)

// VerificationAttempts implements history.AttemptReader by scanning every send.
func (s *Store) VerificationAttempts(ctx context.Context, f history.AttemptFilter) ([]history.SendRow, *history.SendCursor, error) {
	if err := alive("verification attempts", ctx); err != nil {
		return nil, nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, nil, fmt.Errorf("inmem: verification attempts: %w", err)
	}
	out := s.selectAttempts(f)
	slices.SortFunc(out, func(a, b history.SendRow) int {
		if newer(a.Time, a.ID, b.Time, b.ID) {
			return -1
		}
		return 1
	})
	out, next := f.Page(out)
	return out, next, nil
}

// AttemptsSummary implements history.AttemptReader; the dev store keeps no rollups.
func (s *Store) AttemptsSummary(ctx context.Context, f history.AttemptFilter) (history.AttemptsSummary, error) {
	var sum history.AttemptsSummary
	if err := alive("attempts summary", ctx); err != nil {
		return sum, err
	}
	if err := f.ValidateSummary(); err != nil {
		return sum, fmt.Errorf("inmem: attempts summary: %w", err)
	}
	f.After = nil
	for _, r := range s.selectAttempts(f) {
		sum.Attempts++
		if history.Converted(r) {
			sum.Converted++
		}
	}
	return sum, nil
}

// selectAttempts are the labelled attempts f selects, past its cursor, in no order.
func (s *Store) selectAttempts(f history.AttemptFilter) []history.SendRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	var out []history.SendRow
	for _, r := range s.sends {
		row := s.label(r, now)
		if f.Matches(row) && (f.After == nil || newer(f.After.Time, f.After.ID, r.Time, r.ID)) {
			out = append(out, row)
		}
	}
	return out
}
