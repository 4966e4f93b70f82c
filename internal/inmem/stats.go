package inmem

import (
	"context"
	"fmt"
	"slices"
	"time"

	"otpgate/internal/otp"
)

// Stats implements otp.HistoryStore.
func (s *Store) Stats(ctx context.Context, since time.Time, bucket time.Duration) ([]otp.StatBucket, error) {
	if err := alive("stats", ctx); err != nil {
		return nil, err
	}
	start, n, err := otp.StatRange(since, s.Now(), bucket)
	if err != nil {
		return nil, fmt.Errorf("inmem: stats: %w", err)
	}
	out := make([]otp.StatBucket, n)
	for i := range out {
		out[i] = otp.StatBucket{Start: start.Add(time.Duration(i) * bucket), Blocked: map[string]int{}}
	}
	at := func(t time.Time) *otp.StatBucket {
		if t.Before(start) {
			return nil
		}
		if i := int(otp.BucketStart(t, bucket).Sub(start) / bucket); i < n {
			return &out[i]
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.sends {
		b := at(r.Time)
		if b == nil {
			continue
		}
		switch r.SendStatus {
		case otp.SendBlocked:
			b.Blocked[r.Reason]++
		case otp.SendDuplicate:
			b.Duplicates++
		case otp.SendFailed:
			b.Failed++
			b.Sends++
		default:
			b.Sends++
		}
	}
	for _, a := range s.attempts {
		if b := at(a.Time); b != nil && a.Outcome == otp.OutcomeApproved {
			b.Approvals++
		}
	}
	for i := range out {
		if out[i].Sends > 0 {
			out[i].ApprovalRatio = float64(out[i].Approvals) / float64(out[i].Sends)
		}
	}
	return out, nil
}

// RecordAdminAction implements otp.HistoryStore.
func (s *Store) RecordAdminAction(ctx context.Context, a otp.AdminAction) error {
	if err := alive("record admin action", ctx); err != nil {
		return err
	}
	if a.Action == "" {
		return fmt.Errorf("inmem: record admin action: %w", &otp.ErrInvalidRequest{Fields: map[string]string{"action": "required"}})
	}
	if a.Time.IsZero() {
		a.Time = s.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a.ID, a.Time = int64(len(s.admin)+1), ts(a.Time)
	s.admin = append(s.admin, a)
	return nil
}

// AdminActions implements otp.HistoryStore.
func (s *Store) AdminActions(ctx context.Context, limit int) ([]otp.AdminAction, error) {
	if err := alive("admin actions", ctx); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > otp.MaxListLimit {
		limit = otp.MaxListLimit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.admin)
	slices.SortFunc(out, func(a, b otp.AdminAction) int {
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
