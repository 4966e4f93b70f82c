package inmem

import (
	"context"
	"fmt"
	"slices"

	"otpgate/internal/history"
	"otpgate/internal/settings"
)

var _ settings.Store = (*Store)(nil)

// setting is one live setting as stored: its document (nil until written) and version.
type setting struct {
	doc     []byte
	version int64
}

// settingState holds the live settings by name.
type settingState struct{ byName map[string]*setting }

func (t *settingState) init() { t.byName = map[string]*setting{} }

// settingOf returns name's setting, made on first use; the caller holds the lock.
func (s *Store) settingOf(name string) *setting {
	byName := part[settingState](s).byName
	if byName[name] == nil {
		byName[name] = &setting{}
	}
	return byName[name]
}

// Setting implements settings.Store.
func (s *Store) Setting(ctx context.Context, name string) ([]byte, int64, error) {
	if err := alive("setting "+name, ctx); err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.settingOf(name)
	return slices.Clone(st.doc), st.version, nil
}

// SettingVersion implements settings.Store.
func (s *Store) SettingVersion(ctx context.Context, name string) (int64, error) {
	if err := alive("setting version "+name, ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settingOf(name).version, nil
}

// SeedSetting implements settings.Store.
func (s *Store) SeedSetting(ctx context.Context, name string, doc []byte) (bool, error) {
	if err := alive("seed setting "+name, ctx); err != nil {
		return false, err
	}
	if err := settings.CheckDocument(doc); err != nil {
		return false, fmt.Errorf("inmem: seed setting %s: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.settingOf(name)
	if st.doc != nil {
		return false, nil
	}
	st.doc = slices.Clone(doc)
	return true, nil
}

// UpdateSetting implements settings.Store.
func (s *Store) UpdateSetting(ctx context.Context, name string, update func([]byte) ([]byte, history.AdminAction, error)) (int64, error) {
	if err := alive("update setting "+name, ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.settingOf(name)
	next, a, err := update(slices.Clone(st.doc))
	if err == nil {
		err = settings.CheckDocument(next)
	}
	if err != nil {
		return 0, err
	}
	if err := a.Validate(); err != nil {
		return 0, fmt.Errorf("inmem: update setting %s: %w", name, err)
	}
	st.doc = slices.Clone(next)
	st.version++
	s.audit(ctx, a)
	return st.version, nil
}

// bumpSetting moves name's version on after a change of the rows it stands for; the
// caller holds the lock.
func (s *Store) bumpSetting(name string) { s.settingOf(name).version++ }
