package inmem

import (
	"context"
	"fmt"
	"slices"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// ListSends implements history.Store by scanning every send.
func (s *Store) ListSends(ctx context.Context, f history.SendFilter) ([]history.SendRow, *history.SendCursor, error) {
	if err := alive("list sends", ctx); err != nil {
		return nil, nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, nil, fmt.Errorf("inmem: list sends: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	var out []history.SendRow
	for _, r := range s.sends {
		row := s.label(r, now)
		switch {
		case f.AppID != "" && r.AppID != f.AppID,
			f.Phone != "" && r.Phone != f.Phone,
			f.ClientIP != "" && r.ClientIP != f.ClientIP,
			!f.From.IsZero() && r.Time.Before(f.From),
			!f.To.IsZero() && !r.Time.Before(f.To),
			f.After != nil && !newer(f.After.Time, f.After.ID, r.Time, r.ID),
			f.Status != "" && row.Status != f.Status:
			continue
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b history.SendRow) int {
		if newer(a.Time, a.ID, b.Time, b.ID) {
			return -1
		}
		return 1
	})
	out, next := f.Page(out)
	return out, next, nil
}

// label copies a send with its history status, which depends on its verification.
func (s *Store) label(r *history.SendRow, now time.Time) history.SendRow {
	row := *r
	row.Attempts = slices.Clone(r.Attempts)
	row.Fraud = copyExplanation(r.Fraud)
	var (
		vs      otp.Status
		expires time.Time
	)
	if v := s.verifications[r.VerificationID]; v != nil {
		vs, expires = v.Status, v.ExpiresAt
	}
	row.Status = history.StatusOf(r.SendStatus, vs, expires, now)
	return row
}

// Send implements history.Store.
func (s *Store) Send(ctx context.Context, id string) (history.SendRow, error) {
	if err := alive("send", ctx); err != nil {
		return history.SendRow{}, err
	}
	id, _ = canonID(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.sends[id]
	if r == nil {
		return history.SendRow{}, fmt.Errorf("inmem: send: %w", otp.ErrNotFound)
	}
	return s.label(r, s.Now()), nil
}

// VerificationDetail implements history.Store.
func (s *Store) VerificationDetail(ctx context.Context, id string) (history.VerificationDetail, error) {
	if err := alive("verification detail", ctx); err != nil {
		return history.VerificationDetail{}, err
	}
	id, _ = canonID(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.verifications[id]
	if v == nil {
		return history.VerificationDetail{}, fmt.Errorf("inmem: verification detail: %w", otp.ErrNotFound)
	}
	now := s.Now()
	d := history.VerificationDetail{Verification: *v}
	d.Verification.CodeHashes, d.Verification.Status = nil, v.StatusAt(now)
	for _, r := range s.sends {
		if r.VerificationID == id {
			d.Sends = append(d.Sends, s.label(r, now))
		}
	}
	slices.SortFunc(d.Sends, func(a, b history.SendRow) int {
		if newer(b.Time, b.ID, a.Time, a.ID) {
			return -1
		}
		return 1
	})
	for _, a := range s.attempts {
		if a.VerificationID == id {
			d.Attempts = append(d.Attempts, a)
		}
	}
	slices.SortStableFunc(d.Attempts, func(a, b history.Attempt) int { return a.Time.Compare(b.Time) })
	return d, nil
}
