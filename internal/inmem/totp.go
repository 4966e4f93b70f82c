package inmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/totp"
)

var _ totp.Store = (*Store)(nil)

// totpState holds entities, factors and challenges, each by id.
type totpState struct {
	entities   map[string]totp.Entity
	factors    map[string]totp.Factor
	challenges map[string]totp.Challenge
}

// totpTables is the store's TOTP entities, factors and challenges; call with s.mu held.
func (s *Store) totpTables() *totpState { return part[totpState](s) }

func (t *totpState) init() {
	if t.entities == nil {
		t.entities, t.factors, t.challenges = map[string]totp.Entity{}, map[string]totp.Factor{}, map[string]totp.Challenge{}
	}
}

// entity finds an app's entity by identity; call with s.mu held.
func (s *Store) entity(appID, identity string) (totp.Entity, bool) {
	for _, e := range s.totpTables().entities {
		if e.AppID == strings.ToLower(appID) && e.Identity == identity {
			return e, true
		}
	}
	return totp.Entity{}, false
}

// EnsureEntity implements totp.Store.
func (s *Store) EnsureEntity(ctx context.Context, e totp.Entity) (totp.Entity, bool, error) {
	if err := alive("ensure entity", ctx); err != nil {
		return totp.Entity{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.entity(e.AppID, e.Identity); ok {
		return old, false, nil
	}
	e.AppID, e.CreatedAt = strings.ToLower(e.AppID), ts(e.CreatedAt)
	s.totpTables().entities[e.ID] = e
	return e, true, nil
}

// Entity implements totp.Store.
func (s *Store) Entity(ctx context.Context, appID, identity string) (totp.Entity, error) {
	if err := alive("entity", ctx); err != nil {
		return totp.Entity{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entity(appID, identity); ok {
		return e, nil
	}
	return totp.Entity{}, otp.ErrNotFound
}

// Entities implements totp.Store.
func (s *Store) Entities(ctx context.Context, appID string) ([]totp.Entity, error) {
	if err := alive("entities", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := func(e totp.Entity) bool { return e.AppID == strings.ToLower(appID) }
	return collect(s.totpTables().entities, mine, oldestFirst(func(e totp.Entity) (time.Time, string) { return e.CreatedAt, e.ID })), nil
}

// DeleteEntity implements totp.Store.
func (s *Store) DeleteEntity(ctx context.Context, appID, identity string) error {
	if err := alive("delete entity", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entity(appID, identity)
	if !ok {
		return otp.ErrNotFound
	}
	tables := s.totpTables()
	for id, f := range tables.factors {
		if f.EntityID == e.ID {
			s.dropFactor(id)
		}
	}
	delete(tables.entities, e.ID)
	return nil
}

// dropFactor deletes a factor with its challenges; call with s.mu held.
func (s *Store) dropFactor(id string) {
	tables := s.totpTables()
	for cid, c := range tables.challenges {
		if c.FactorID == id {
			delete(tables.challenges, cid)
		}
	}
	delete(tables.factors, id)
}

// CreateFactor implements totp.Store.
func (s *Store) CreateFactor(ctx context.Context, f totp.Factor) error {
	if err := alive("create factor", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.totpTables()
	if _, ok := tables.entities[f.EntityID]; !ok {
		return otp.ErrNotFound
	}
	f.AppID, f.Sealed, f.CreatedAt, f.UpdatedAt = strings.ToLower(f.AppID), slices.Clone(f.Sealed), ts(f.CreatedAt), ts(f.UpdatedAt)
	tables.factors[f.ID] = f
	return nil
}

// factor finds a factor of an app's entity; call with s.mu held.
func (s *Store) factor(appID, identity, id string) (totp.Factor, bool) {
	e, ok := s.entity(appID, identity)
	if !ok {
		return totp.Factor{}, false
	}
	f, ok := s.totpTables().factors[strings.ToLower(id)]
	if !ok || f.EntityID != e.ID {
		return totp.Factor{}, false
	}
	f.Sealed = slices.Clone(f.Sealed)
	return f, true
}

// Factor implements totp.Store.
func (s *Store) Factor(ctx context.Context, appID, identity, id string) (totp.Factor, error) {
	if err := alive("factor", ctx); err != nil {
		return totp.Factor{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.factor(appID, identity, id); ok {
		return f, nil
	}
	return totp.Factor{}, otp.ErrNotFound
}

// Factors implements totp.Store.
func (s *Store) Factors(ctx context.Context, appID, identity string) ([]totp.Factor, error) {
	if err := alive("factors", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entity(appID, identity)
	if !ok {
		return nil, nil
	}
	out := collect(s.totpTables().factors, func(f totp.Factor) bool { return f.EntityID == e.ID },
		oldestFirst(func(f totp.Factor) (time.Time, string) { return f.CreatedAt, f.ID }))
	for i := range out {
		out[i].Sealed = slices.Clone(out[i].Sealed)
	}
	return out, nil
}

// RenameFactor implements totp.Store.
func (s *Store) RenameFactor(ctx context.Context, appID, identity, id, name string, now time.Time) (totp.Factor, error) {
	if err := alive("rename factor", ctx); err != nil {
		return totp.Factor{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.factor(appID, identity, id)
	if !ok {
		return totp.Factor{}, otp.ErrNotFound
	}
	f.FriendlyName, f.UpdatedAt = name, ts(now)
	s.totpTables().factors[f.ID] = f
	f.Sealed = slices.Clone(f.Sealed)
	return f, nil
}

// DeleteFactor implements totp.Store.
func (s *Store) DeleteFactor(ctx context.Context, appID, identity, id string) error {
	if err := alive("delete factor", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.factor(appID, identity, id)
	if !ok {
		return otp.ErrNotFound
	}
	s.dropFactor(f.ID)
	return nil
}

// AcceptStep implements totp.Store: the mutex makes the compare and the change one step.
func (s *Store) AcceptStep(ctx context.Context, appID, id string, step int64, now time.Time) (totp.Factor, bool, error) {
	if err := alive("accept step", ctx); err != nil {
		return totp.Factor{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.totpTables()
	f, ok := tables.factors[strings.ToLower(id)]
	if !ok || f.AppID != strings.ToLower(appID) {
		return totp.Factor{}, false, otp.ErrNotFound
	}
	accepted := step > f.LastStep
	if accepted {
		f.LastStep, f.Status, f.UpdatedAt = step, totp.FactorVerified, ts(now)
		tables.factors[f.ID] = f
	}
	f.Sealed = slices.Clone(f.Sealed)
	return f, accepted, nil
}

// CreateChallenge implements totp.Store.
func (s *Store) CreateChallenge(ctx context.Context, c totp.Challenge) error {
	if err := alive("create challenge", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.totpTables()
	if _, ok := tables.factors[c.FactorID]; !ok {
		return otp.ErrNotFound
	}
	c.AppID, c.CreatedAt = strings.ToLower(c.AppID), ts(c.CreatedAt)
	tables.challenges[c.ID] = c
	return nil
}

// Challenge implements totp.Store.
func (s *Store) Challenge(ctx context.Context, appID, identity, id string) (totp.Challenge, error) {
	if err := alive("challenge", ctx); err != nil {
		return totp.Challenge{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entity(appID, identity)
	c, found := s.totpTables().challenges[strings.ToLower(id)]
	if !ok || !found || c.EntityID != e.ID {
		return totp.Challenge{}, otp.ErrNotFound
	}
	return c, nil
}

// Challenges implements totp.Store.
func (s *Store) Challenges(ctx context.Context, appID, identity, factorID string, status totp.ChallengeStatus) ([]totp.Challenge, error) {
	if err := alive("challenges", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entity(appID, identity)
	if !ok {
		return nil, nil
	}
	keep := func(c totp.Challenge) bool {
		return c.EntityID == e.ID && (factorID == "" || c.FactorID == strings.ToLower(factorID)) && (status == "" || c.Status == status)
	}
	return collect(s.totpTables().challenges, keep, newestFirst(func(c totp.Challenge) (time.Time, string) { return c.CreatedAt, c.ID })), nil
}
