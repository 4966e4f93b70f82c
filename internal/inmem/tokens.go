package inmem

import (
	"context"
	"slices"
	"time"

	"otpgate/internal/tokens"
)

// tokenState holds signing keys and redemptions; the store's mutex guards it.
type tokenState struct {
	keys []tokens.StoredKey
	// redeemed maps a redeemed jti to its token's expiry.
	redeemed map[string]time.Time
}

func (t *tokenState) init() { t.redeemed = map[string]time.Time{} }

// tokenTables is the store's signing keys and redemptions; call with s.mu held.
func (s *Store) tokenTables() *tokenState { return part[tokenState](s) }

var _ tokens.Store = (*Store)(nil)

// SigningKeys implements tokens.Store.
func (s *Store) SigningKeys(ctx context.Context) ([]tokens.StoredKey, error) {
	if err := alive("signing keys", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tokenTables().keys), nil
}

// AddSigningKey implements tokens.Store.
func (s *Store) AddSigningKey(ctx context.Context, k tokens.StoredKey, staleBefore time.Time) (bool, error) {
	if err := alive("add signing key", ctx); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.tokenTables()
	for _, old := range tables.keys {
		if old.CreatedAt.After(staleBefore) {
			return false, nil
		}
	}
	k.Sealed, k.CreatedAt, k.ActiveAt = slices.Clone(k.Sealed), ts(k.CreatedAt), ts(k.ActiveAt)
	tables.keys = append(tables.keys, k)
	return true, nil
}

// DeleteSigningKeys implements tokens.Store.
func (s *Store) DeleteSigningKeys(ctx context.Context, ids []string) error {
	if err := alive("delete signing keys", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.tokenTables()
	tables.keys = slices.DeleteFunc(tables.keys, func(k tokens.StoredKey) bool { return slices.Contains(ids, k.ID) })
	return nil
}

// Redeem implements tokens.Store; it forgets the redemptions of tokens that expired a
// minute before r, as the Postgres store does.
func (s *Store) Redeem(ctx context.Context, r tokens.Redemption) error {
	if err := alive("redeem token", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.tokenTables()
	if _, ok := tables.redeemed[r.JTI]; ok {
		return tokens.ErrRedeemed
	}
	for jti, exp := range tables.redeemed {
		if exp.Before(r.RedeemedAt.Add(-time.Minute)) {
			delete(tables.redeemed, jti)
		}
	}
	tables.redeemed[r.JTI] = r.ExpiresAt
	return nil
}
