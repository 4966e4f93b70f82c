package inmem

import (
	"context"
	"fmt"
	"slices"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// Stats implements history.Store by feeding every send and approval to history.StatCounter.
func (s *Store) Stats(ctx context.Context, since time.Time, bucket time.Duration, appID string) ([]history.StatBucket, error) {
	if err := alive("stats", ctx); err != nil {
		return nil, err
	}
	c, err := history.NewStatCounter(since, s.Now(), bucket)
	if err != nil {
		return nil, fmt.Errorf("inmem: stats: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Dev mode purges nothing, so every row is still there to count.
	for _, r := range s.sends {
		if appID == "" || r.AppID == appID {
			c.AddSends(r.Time, r.SendStatus, r.Reason, 1)
		}
	}
	for _, a := range s.attempts {
		if a.Outcome == otp.OutcomeApproved && (appID == "" || s.verifications[a.VerificationID].AppID == appID) {
			c.AddApprovals(a.Time, 1)
		}
	}
	return c.Buckets(), nil
}

// RecordAdminAction implements history.Store.
func (s *Store) RecordAdminAction(ctx context.Context, a history.AdminAction) error {
	if err := alive("record admin action", ctx); err != nil {
		return err
	}
	if err := a.Validate(); err != nil {
		return fmt.Errorf("inmem: record admin action: %w", err)
	}
	if a.Time.IsZero() {
		a.Time = s.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit(ctx, a)
	return nil
}

// AuditLog implements history.Store.
func (s *Store) AuditLog(ctx context.Context, f history.AuditFilter) ([]history.AdminAction, error) {
	if err := alive("audit log", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	var out []history.AdminAction
	for _, a := range s.admin {
		if f.Matches(a) {
			out = append(out, a)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b history.AdminAction) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return int(b.ID - a.ID)
	})
	if n := history.AdminActionLimit(f.Limit); len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// AdminActions implements history.Store.
func (s *Store) AdminActions(ctx context.Context, limit int) ([]history.AdminAction, error) {
	if err := alive("admin actions", ctx); err != nil {
		return nil, err
	}
	limit = history.AdminActionLimit(limit)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.admin)
	slices.SortFunc(out, func(a, b history.AdminAction) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return int(b.ID - a.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
