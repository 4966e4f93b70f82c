package inmem

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// appState holds apps and keys; the store's mutex guards it.
type appState struct {
	apps    map[string]otp.App
	deleted map[string]bool
	keys    map[string]apps.Key
	// tests are the test numbers by id.
	tests map[string]apps.TestNumber
	// rateLimits are the apps' rate limits, oldest first.
	rateLimits []apps.RateLimit
}

func (a *appState) init() {
	a.apps, a.deleted, a.keys, a.tests = map[string]otp.App{}, map[string]bool{}, map[string]apps.Key{}, map[string]apps.TestNumber{}
}

// appTables is the store's apps, keys and test numbers; call with s.mu held.
func (s *Store) appTables() *appState { return part[appState](s) }

var _ apps.Store = (*Store)(nil)

// LoadApps implements apps.Store.
func (s *Store) LoadApps(ctx context.Context) (apps.Set, error) {
	if err := alive("load apps", ctx); err != nil {
		return apps.Set{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set := apps.Set{Version: s.settingOf(apps.SettingName).version}
	tables := s.appTables()
	for _, id := range slices.Sorted(maps.Keys(tables.apps)) {
		if !tables.deleted[id] {
			set.Apps = append(set.Apps, cloneApp(tables.apps[id]))
		}
	}
	for _, k := range s.sortedKeys("") {
		if !k.Revoked() {
			set.Keys = append(set.Keys, k)
		}
	}
	now := s.Now()
	for _, t := range s.sortedTestNumbers("") {
		if now.Before(t.ExpiresAt) {
			set.TestNumbers = append(set.TestNumbers, t)
		}
	}
	return set, nil
}

// AppByID implements apps.Store.
func (s *Store) AppByID(ctx context.Context, id string) (otp.App, error) {
	if err := alive("app", ctx); err != nil {
		return otp.App{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id = strings.ToLower(id)
	tables := s.appTables()
	a, ok := tables.apps[id]
	if !ok || tables.deleted[id] {
		return otp.App{}, fmt.Errorf("inmem: app: %w", otp.ErrNotFound)
	}
	return cloneApp(a), nil
}

// AppKeys implements apps.Store.
func (s *Store) AppKeys(ctx context.Context, appID string) ([]apps.Key, error) {
	if err := alive("app keys", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedKeys(strings.ToLower(appID)), nil
}

// sortedKeys lists the keys of one app (or of all, for ""), oldest first.
func (s *Store) sortedKeys(appID string) []apps.Key {
	out := collect(s.appTables().keys, func(k apps.Key) bool { return appID == "" || k.AppID == appID },
		oldestFirst(func(k apps.Key) (time.Time, string) { return k.CreatedAt, k.ID }))
	for i := range out {
		out[i].Hash = slices.Clone(out[i].Hash)
	}
	return out
}

// CreateApp implements apps.Store.
func (s *Store) CreateApp(ctx context.Context, a otp.App, audit history.AdminAction) error {
	return s.changeApps(ctx, "create app", audit, func() error {
		a, err := apps.Validate(a)
		if err != nil {
			return err
		}
		tables := s.appTables()
		if _, taken := tables.apps[a.ID]; taken || a.ID == "" || a.ID == otp.DefaultAppID {
			return fmt.Errorf("app %q exists", a.ID)
		}
		tables.apps[a.ID] = cloneApp(stamp(a))
		return nil
	})
}

// UpdateApp implements apps.Store.
func (s *Store) UpdateApp(ctx context.Context, a otp.App, audit history.AdminAction) error {
	return s.changeApps(ctx, "update app", audit, func() error {
		a, err := apps.Validate(a)
		if err != nil {
			return err
		}
		tables := s.appTables()
		old, ok := tables.apps[a.ID]
		if !ok || tables.deleted[a.ID] {
			return otp.ErrNotFound
		}
		a.CreatedAt = old.CreatedAt
		tables.apps[a.ID] = cloneApp(stamp(a))
		return nil
	})
}

// DeleteApp implements apps.Store.
func (s *Store) DeleteApp(ctx context.Context, id string, at time.Time, audit history.AdminAction) error {
	return s.changeApps(ctx, "delete app", audit, func() error {
		id = strings.ToLower(id)
		tables := s.appTables()
		if _, ok := tables.apps[id]; !ok || tables.deleted[id] {
			return otp.ErrNotFound
		}
		tables.deleted[id] = true
		for kid, k := range tables.keys {
			if k.AppID == id && !k.Revoked() {
				k.RevokedAt = ts(at)
				tables.keys[kid] = k
			}
		}
		s.dropEndpoints(func(e events.Endpoint) bool { return e.AppID == id })
		return nil
	})
}

// CreateKey implements apps.Store.
func (s *Store) CreateKey(ctx context.Context, k apps.Key, audit history.AdminAction) error {
	if err := otp.CheckTextIn("key", k); err != nil {
		return fmt.Errorf("inmem: create key: %w", err)
	}
	return s.changeApps(ctx, "create key", audit, func() error {
		tables := s.appTables()
		if _, taken := tables.keys[k.ID]; taken || k.ID == "" || len(k.Hash) == 0 {
			return fmt.Errorf("key %q exists or is incomplete", k.ID)
		}
		k.Hash, k.CreatedAt = slices.Clone(k.Hash), ts(k.CreatedAt)
		tables.keys[k.ID] = k
		return nil
	})
}

// RevokeKey implements apps.Store.
func (s *Store) RevokeKey(ctx context.Context, appID, keyID string, at time.Time, audit history.AdminAction) error {
	return s.changeApps(ctx, "revoke key", audit, func() error {
		tables := s.appTables()
		k, ok := tables.keys[keyID]
		if !ok || k.AppID != strings.ToLower(appID) || k.Revoked() {
			return otp.ErrNotFound
		}
		k.RevokedAt = ts(at)
		tables.keys[keyID] = k
		return nil
	})
}

// TouchKeys implements apps.Store.
func (s *Store) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if err := alive("touch keys", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, at := range used {
		tables := s.appTables()
		if k, ok := tables.keys[id]; ok && at.After(k.LastUsedAt) {
			k.LastUsedAt = ts(at)
			tables.keys[id] = k
		}
	}
	return nil
}

// changeApps runs one change with its audit entry under the lock, as one transaction:
// when change fails, neither it nor the entry is kept.
func (s *Store) changeApps(ctx context.Context, op string, audit history.AdminAction, change func() error) error {
	if err := alive(op, ctx); err != nil {
		return err
	}
	if err := audit.Validate(); err != nil {
		return fmt.Errorf("inmem: %s: %w", op, err)
	}
	if audit.Time.IsZero() {
		audit.Time = s.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := change(); err != nil {
		return fmt.Errorf("inmem: %s: %w", op, err)
	}
	s.bumpSetting(apps.SettingName)
	s.audit(ctx, audit)
	return nil
}

// stamp stores an app's times as Postgres would.
func stamp(a otp.App) otp.App {
	a.CreatedAt, a.UpdatedAt = ts(a.CreatedAt), ts(a.UpdatedAt)
	return a
}

func cloneApp(a otp.App) otp.App {
	a.Locales = slices.Clone(a.Locales)
	a.AllowedCountries = slices.Clone(a.AllowedCountries)
	a.Channels = slices.Clone(a.Channels)
	a.AllowedOrigins = slices.Clone(a.AllowedOrigins)
	a.SendRules = slices.Clone(a.SendRules)
	a.CheckRules = slices.Clone(a.CheckRules)
	if a.DeniedNumberTypes != nil {
		types := slices.Clone(*a.DeniedNumberTypes)
		a.DeniedNumberTypes = &types
	}
	a.TestNumbers = nil // the registry's, never stored
	return a
}
