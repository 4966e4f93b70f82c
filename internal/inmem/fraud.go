package inmem

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

var _ fraud.Store = (*Store)(nil)

// fraudState is what the store keeps of the fraud guard.
type fraudState struct {
	entries []fraud.ListEntry
	nextID  int64
	blocks  []fraud.Block
}

// fraudTables is the store's the fraud guard's lists and blocks; call with s.mu held.
func (s *Store) fraudTables() *fraudState { return part[fraudState](s) }

// audit appends an admin action with the actor ctx carries; the caller holds the lock.
func (s *Store) audit(ctx context.Context, a history.AdminAction) {
	a = a.Stamp(ctx)
	if a.Time.IsZero() {
		a.Time = s.Now()
	}
	a.ID, a.Time = int64(len(s.admin)+1), ts(a.Time)
	s.admin = append(s.admin, a)
}

// FraudState implements fraud.Store.
func (s *Store) FraudState(ctx context.Context) (fraud.State, error) {
	if err := alive("fraud state", ctx); err != nil {
		return fraud.State{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.settingOf(fraud.SettingName)
	values, err := fraud.DecodeValues(st.doc)
	if err != nil {
		return fraud.State{}, fmt.Errorf("inmem: %w", err)
	}
	return fraud.State{Values: values, Entries: slices.Clone(s.fraudTables().entries), Version: st.version}, nil
}

// AddFraudListEntry implements fraud.Store.
func (s *Store) AddFraudListEntry(ctx context.Context, e fraud.ListEntry, a history.AdminAction) (fraud.ListEntry, error) {
	if err := alive("add fraud list entry", ctx); err != nil {
		return fraud.ListEntry{}, err
	}
	if err := errors.Join(otp.CheckTextIn("entry", e), a.Validate()); err != nil {
		return fraud.ListEntry{}, fmt.Errorf("inmem: add fraud list entry: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.fraudTables()
	for _, old := range tables.entries {
		if old.List == e.List && old.Kind == e.Kind && old.Value == e.Value {
			return fraud.ListEntry{}, &otp.ErrInvalidRequest{Fields: map[string]string{"value": "already on the " + string(e.List) + " list"}}
		}
	}
	tables.nextID++
	e.ID = tables.nextID
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.Now()
	}
	e.CreatedAt = ts(e.CreatedAt)
	tables.entries = append(tables.entries, e)
	s.bumpSetting(fraud.SettingName)
	s.audit(ctx, fraud.AuditListAdd(a, e))
	return e, nil
}

// DeleteFraudListEntry implements fraud.Store.
func (s *Store) DeleteFraudListEntry(ctx context.Context, id int64, a history.AdminAction) (fraud.ListEntry, error) {
	if err := alive("delete fraud list entry", ctx); err != nil {
		return fraud.ListEntry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.fraudTables()
	i := slices.IndexFunc(tables.entries, func(e fraud.ListEntry) bool { return e.ID == id })
	if i < 0 {
		return fraud.ListEntry{}, fmt.Errorf("inmem: delete fraud list entry: %w", otp.ErrNotFound)
	}
	e := tables.entries[i]
	tables.entries = slices.Delete(tables.entries, i, i+1)
	s.bumpSetting(fraud.SettingName)
	a = fraud.AuditListRemove(a, e)
	s.audit(ctx, a)
	return e, nil
}

// RecordFraudBlock implements fraud.Store.
func (s *Store) RecordFraudBlock(ctx context.Context, b fraud.Block, a history.AdminAction) error {
	if err := alive("record fraud block", ctx); err != nil {
		return err
	}
	if _, err := uuid.Parse(b.ID); err != nil {
		return fmt.Errorf("inmem: record fraud block: invalid use of the store: id must be a uuid")
	}
	if err := errors.Join(otp.CheckTextIn("block", b), a.Validate()); err != nil {
		return fmt.Errorf("inmem: record fraud block: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b.StartedAt, b.EndsAt = ts(b.StartedAt), ts(b.EndsAt)
	b.Why = copyExplanation(b.Why)
	tables := s.fraudTables()
	tables.blocks = append(tables.blocks, b)
	s.emit("", events.FraudBlockStarted, b.ID, b.ID, blockData(&b), b.StartedAt)
	s.audit(ctx, a)
	return nil
}

// FraudBlocks implements fraud.Store.
func (s *Store) FraudBlocks(ctx context.Context, f fraud.BlockFilter) ([]fraud.Block, error) {
	if err := alive("fraud blocks", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []fraud.Block
	for _, b := range s.fraudTables().blocks {
		if f.All || b.Active(f.Now) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(x, y fraud.Block) int {
		if c := y.StartedAt.Compare(x.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(y.ID, x.ID)
	})
	if f.Limit > 0 && len(out) > history.AdminActionLimit(f.Limit) {
		out = out[:history.AdminActionLimit(f.Limit)]
	}
	return out, nil
}

// LiftFraudBlock implements fraud.Store.
func (s *Store) LiftFraudBlock(ctx context.Context, id string, at time.Time, by string, a history.AdminAction) (fraud.Block, error) {
	if err := alive("lift fraud block", ctx); err != nil {
		return fraud.Block{}, err
	}
	id, _ = canonID(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	fraudT := s.fraudTables()
	i := slices.IndexFunc(fraudT.blocks, func(b fraud.Block) bool { return b.ID == id })
	if i < 0 {
		return fraud.Block{}, fmt.Errorf("inmem: lift fraud block: %w", otp.ErrNotFound)
	}
	b := &fraudT.blocks[i]
	if b.LiftedAt.IsZero() {
		b.LiftedAt, b.LiftedBy = ts(at), by
	}
	if !s.eventTables().blocksEnded[b.ID] {
		s.endBlock(b, minTime(b.LiftedAt, b.EndsAt), at)
	}
	a = fraud.AuditLift(a, *b, at)
	if a.Time.IsZero() {
		a.Time = at
	}
	s.audit(ctx, a)
	return *b, nil
}

// FraudConversion implements fraud.Store.
func (s *Store) FraudConversion(ctx context.Context, since time.Time, drop int) ([]fraud.PrefixCount, error) {
	if err := alive("fraud conversion", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := map[string]*fraud.PrefixCount{}
	at := func(phone string) *fraud.PrefixCount {
		p := fraud.Prefix(phone, drop)
		if counts[p] == nil {
			counts[p] = &fraud.PrefixCount{Prefix: p}
		}
		return counts[p]
	}
	// Dev mode purges nothing, so every row is still there to count.
	for _, r := range s.sends {
		if r.Time.Before(since) || fraud.Prefix(r.Phone, drop) == "" {
			continue
		}
		switch r.SendStatus {
		case otp.SendSent, otp.SendSending:
			at(r.Phone).Sends++
		case otp.SendBlocked:
			at(r.Phone).Blocked++
		}
	}
	for _, a := range s.attempts {
		v := s.verifications[a.VerificationID]
		if a.Outcome != otp.OutcomeApproved || a.Time.Before(since) || v == nil || fraud.Prefix(v.Address, drop) == "" {
			continue
		}
		at(v.Address).Approvals++
	}
	out := make([]fraud.PrefixCount, 0, len(counts))
	for _, c := range counts {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(x, y fraud.PrefixCount) int { return strings.Compare(x.Prefix, y.Prefix) })
	return out, nil
}

// ShadowSends implements fraud.Store.
func (s *Store) ShadowSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	return s.newestSends(ctx, "shadow sends", limit, func(r *history.SendRow) bool { return r.Shadow != "" })
}

// ChallengedSends implements fraud.Store.
func (s *Store) ChallengedSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	return s.newestSends(ctx, "challenged sends", limit, func(r *history.SendRow) bool {
		return r.Fraud != nil && (r.Fraud.Action == rate.FraudChallenged || r.Fraud.Action == rate.FraudPassed)
	})
}

// newestSends returns the newest sends that keep holds for, at most
// history.AdminActionLimit(limit).
func (s *Store) newestSends(ctx context.Context, what string, limit int, keep func(*history.SendRow) bool) ([]history.SendRow, error) {
	if err := alive(what, ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	var out []history.SendRow
	for _, r := range s.sends {
		if keep(r) {
			out = append(out, s.label(r, now))
		}
	}
	slices.SortFunc(out, func(a, b history.SendRow) int {
		if newer(a.Time, a.ID, b.Time, b.ID) {
			return -1
		}
		return 1
	})
	if n := history.AdminActionLimit(limit); len(out) > n {
		out = out[:n]
	}
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// copyExplanation keeps the store's explanations its own; nil for nil.
func copyExplanation(e *rate.FraudExplanation) *rate.FraudExplanation {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}
