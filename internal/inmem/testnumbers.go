package inmem

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// TestNumbers implements apps.Store.
func (s *Store) TestNumbers(ctx context.Context, appID string) ([]apps.TestNumber, error) {
	if err := alive("test numbers", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedTestNumbers(strings.ToLower(appID)), nil
}

// sortedTestNumbers lists the test numbers of one app (or of all, for ""), newest first.
func (s *Store) sortedTestNumbers(appID string) []apps.TestNumber {
	var out []apps.TestNumber
	for _, t := range s.appTables().tests {
		if appID == "" || t.AppID == appID {
			t.Sealed = slices.Clone(t.Sealed)
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b apps.TestNumber) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out
}

// CreateTestNumber implements apps.Store.
func (s *Store) CreateTestNumber(ctx context.Context, t apps.TestNumber, audit history.AdminAction) error {
	if err := otp.CheckTextIn("test number", t); err != nil {
		return fmt.Errorf("inmem: create test number: %w", err)
	}
	return s.changeApps(ctx, "create test number", audit, func() error {
		t.AppID = strings.ToLower(t.AppID)
		tables := s.appTables()
		for id, old := range tables.tests {
			if old.AppID != t.AppID || old.Address != t.Address {
				continue
			}
			if t.CreatedAt.Before(old.ExpiresAt) {
				return &otp.ErrInvalidRequest{Fields: map[string]string{"address": "is a working test number of this app already"}}
			}
			delete(tables.tests, id)
		}
		t.Sealed, t.CreatedAt, t.ExpiresAt = slices.Clone(t.Sealed), ts(t.CreatedAt), ts(t.ExpiresAt)
		tables.tests[t.ID] = t
		return nil
	})
}

// DeleteTestNumber implements apps.Store.
func (s *Store) DeleteTestNumber(ctx context.Context, appID, id string, audit history.AdminAction) (apps.TestNumber, error) {
	var t apps.TestNumber
	err := s.changeApps(ctx, "delete test number", audit, func() error {
		var ok bool
		tables := s.appTables()
		t, ok = tables.tests[strings.ToLower(id)]
		if !ok || t.AppID != strings.ToLower(appID) {
			return otp.ErrNotFound
		}
		delete(tables.tests, t.ID)
		return nil
	})
	return t, err
}
