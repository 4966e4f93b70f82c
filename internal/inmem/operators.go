package inmem

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
)

// operatorState holds operator accounts and tokens; the store's mutex guards it.
type operatorState struct {
	byID   map[string]operators.Operator
	tokens map[string]operators.Token
	// logins holds the expiry of each single sign-on state that came back, by its hash.
	logins map[string]time.Time
}

func (o *operatorState) init() {
	o.byID, o.tokens, o.logins = map[string]operators.Operator{}, map[string]operators.Token{}, map[string]time.Time{}
}

// operatorTables is the store's operator accounts, tokens and logins; call with s.mu held.
func (s *Store) operatorTables() *operatorState { return part[operatorState](s) }

var _ operators.Store = (*Store)(nil)

// ListOperators implements operators.Store.
func (s *Store) ListOperators(ctx context.Context) ([]operators.Operator, error) {
	if err := alive("list operators", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.operatorTables().byID))
	slices.SortFunc(out, func(a, b operators.Operator) int { return strings.Compare(a.Email, b.Email) })
	return out, nil
}

// OperatorByID implements operators.Store.
func (s *Store) OperatorByID(ctx context.Context, id string) (operators.Operator, error) {
	return s.operatorWhere(ctx, "operator by id", func(o operators.Operator) bool { return o.ID == id })
}

// OperatorByEmail implements operators.Store.
func (s *Store) OperatorByEmail(ctx context.Context, email string) (operators.Operator, error) {
	return s.operatorWhere(ctx, "operator by email", func(o operators.Operator) bool { return o.Email == email })
}

// OperatorBySubject implements operators.Store.
func (s *Store) OperatorBySubject(ctx context.Context, subject string) (operators.Operator, error) {
	return s.operatorWhere(ctx, "operator by subject", func(o operators.Operator) bool { return subject != "" && o.Subject == subject })
}

func (s *Store) operatorWhere(ctx context.Context, op string, match func(operators.Operator) bool) (operators.Operator, error) {
	if err := alive(op, ctx); err != nil {
		return operators.Operator{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.operatorTables().byID {
		if match(o) {
			return o, nil
		}
	}
	return operators.Operator{}, otp.ErrNotFound
}

// CreateOperator implements operators.Store.
func (s *Store) CreateOperator(ctx context.Context, o operators.Operator, audit history.AdminAction) error {
	return s.changeOperators(ctx, "create operator", audit, func() error {
		if err := s.operatorTaken(o); err != nil {
			return err
		}
		o.SessionEpoch, o.LastSeenAt, o.SignedInAt = 0, time.Time{}, time.Time{} // as Postgres's insert
		s.operatorTables().byID[o.ID] = stampOperator(o)
		return nil
	})
}

// UpdateOperator implements operators.Store.
func (s *Store) UpdateOperator(ctx context.Context, o operators.Operator, keepAnAdmin bool, audit history.AdminAction) error {
	return s.changeOperators(ctx, "update operator", audit, func() error {
		tables := s.operatorTables()
		old, ok := tables.byID[o.ID]
		if !ok {
			return otp.ErrNotFound
		}
		if keepAnAdmin && old.ActiveAdmin() && !o.ActiveAdmin() && !s.otherActiveAdmin(o.ID) {
			return operators.ErrLastAdmin
		}
		if err := s.operatorTaken(o); err != nil {
			return err
		}
		o.CreatedAt, o.LastSeenAt, o.SignedInAt, o.SessionEpoch = old.CreatedAt, old.LastSeenAt, old.SignedInAt, old.SessionEpoch
		tables.byID[o.ID] = stampOperator(o)
		return nil
	})
}

// otherActiveAdmin reports whether an account other than id is an active admin; the
// caller holds the lock.
func (s *Store) otherActiveAdmin(id string) bool {
	for _, other := range s.operatorTables().byID {
		if other.ID != id && other.ActiveAdmin() {
			return true
		}
	}
	return false
}

// operatorTaken refuses an email or subject another account has, as the unique
// constraints of Postgres do; the caller holds the lock.
func (s *Store) operatorTaken(o operators.Operator) error {
	for _, other := range s.operatorTables().byID {
		if other.ID == o.ID {
			continue
		}
		if other.Email == o.Email {
			return &otp.ErrInvalidRequest{Fields: map[string]string{"email": "another operator has it"}}
		}
		if o.Subject != "" && other.Subject == o.Subject {
			return &otp.ErrInvalidRequest{Fields: map[string]string{"subject": "another operator has it"}}
		}
	}
	return nil
}

// stampOperator stores an account's times as Postgres would.
func stampOperator(o operators.Operator) operators.Operator {
	o.CreatedAt, o.UpdatedAt, o.LastSeenAt, o.SignedInAt = ts(o.CreatedAt), ts(o.UpdatedAt), ts(o.LastSeenAt), ts(o.SignedInAt)
	return o
}

// OperatorTokens implements operators.Store.
func (s *Store) OperatorTokens(ctx context.Context, operatorID string) ([]operators.Token, error) {
	if err := alive("operator tokens", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return collect(s.operatorTables().tokens, func(t operators.Token) bool { return t.OperatorID == operatorID },
		oldestFirst(func(t operators.Token) (time.Time, string) { return t.CreatedAt, t.ID })), nil
}

// CreateToken implements operators.Store.
func (s *Store) CreateToken(ctx context.Context, t operators.Token, audit history.AdminAction) error {
	return s.changeOperators(ctx, "create operator token", audit, func() error {
		tables := s.operatorTables()
		if _, ok := tables.byID[t.OperatorID]; !ok {
			return otp.ErrNotFound
		}
		t.CreatedAt, t.ExpiresAt, t.RevokedAt, t.LastUsedAt = ts(t.CreatedAt), ts(t.ExpiresAt), ts(t.RevokedAt), ts(t.LastUsedAt)
		t.Hash = bytes.Clone(t.Hash)
		tables.tokens[t.ID] = t
		return nil
	})
}

// RevokeToken implements operators.Store.
func (s *Store) RevokeToken(ctx context.Context, operatorID, tokenID string, at time.Time, audit history.AdminAction) error {
	return s.changeOperators(ctx, "revoke operator token", audit, func() error {
		tables := s.operatorTables()
		t, ok := tables.tokens[tokenID]
		if !ok || t.OperatorID != operatorID || t.Revoked() {
			return otp.ErrNotFound
		}
		t.RevokedAt = ts(at)
		tables.tokens[tokenID] = t
		return nil
	})
}

// TokenByHash implements operators.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (operators.Token, error) {
	if err := alive("token by hash", ctx); err != nil {
		return operators.Token{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.operatorTables().tokens {
		if bytes.Equal(t.Hash, hash) {
			return t, nil
		}
	}
	return operators.Token{}, otp.ErrNotFound
}

// EndSessions implements operators.Store.
func (s *Store) EndSessions(ctx context.Context, operatorID string) error {
	if err := alive("end sessions", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.operatorTables()
	if o, ok := tables.byID[operatorID]; ok {
		o.SessionEpoch++
		tables.byID[operatorID] = o
	}
	return nil
}

// UseLoginState implements operators.Store.
func (s *Store) UseLoginState(ctx context.Context, stateHash []byte, expires, now time.Time) error {
	if err := alive("use login state", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.operatorTables()
	maps.DeleteFunc(tables.logins, func(_ string, until time.Time) bool { return until.Before(now) })
	if _, used := tables.logins[string(stateHash)]; used {
		return operators.ErrLoginUsed
	}
	tables.logins[string(stateHash)] = expires
	return nil
}

// TouchOperator implements operators.Store.
func (s *Store) TouchOperator(ctx context.Context, operatorID, tokenID string, at time.Time) error {
	if err := alive("touch operator", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.operatorTables()
	if o, ok := tables.byID[operatorID]; ok {
		o.LastSeenAt = ts(at)
		if tokenID == "" {
			o.SignedInAt = ts(at)
		}
		tables.byID[operatorID] = o
	}
	if t, ok := tables.tokens[tokenID]; ok && t.OperatorID == operatorID {
		t.LastUsedAt = ts(at)
		tables.tokens[tokenID] = t
	}
	return nil
}

// changeOperators runs one change with its audit entry under the lock, as one
// transaction: when change fails, neither it nor the entry is kept.
func (s *Store) changeOperators(ctx context.Context, op string, audit history.AdminAction, change func() error) error {
	if err := alive(op, ctx); err != nil {
		return err
	}
	if err := audit.Validate(); err != nil {
		return fmt.Errorf("inmem: %s: %w", op, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := change(); err != nil {
		return fmt.Errorf("inmem: %s: %w", op, err)
	}
	s.audit(ctx, audit)
	return nil
}
