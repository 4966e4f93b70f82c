package inmem

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/retention"
)

var _ retention.Store = (*Store)(nil)

// lifecycle is what the store keeps for history that ends: the hourly rollups and the
// boundary before which they, not the raw rows, count (zero while nothing is rolled up).
type lifecycle struct {
	lock         sync.Mutex
	rolledBefore time.Time
	stats        map[statKey]int
	conversion   map[convKey]convCount
}

type statKey struct {
	hour         time.Time
	app          string
	kind, reason string
}

type convKey struct {
	hour   time.Time
	prefix string
}

type convCount struct {
	drop                      int
	sends, blocked, approvals int
}

// LifecycleTargets implements retention.Store with the tables internal/postgres purges.
func (s *Store) LifecycleTargets() []retention.Target {
	return []retention.Target{
		{Name: "event_outbox", Keep: retention.KeepHistory},
		{Name: "attempts", Keep: retention.KeepHistory},
		{Name: "sends", Keep: retention.KeepHistory},
		{Name: "verifications", Keep: retention.KeepHistory},
		{Name: "stats_hourly", Keep: retention.KeepRollups},
		{Name: "conversion_hourly", Keep: retention.KeepRollups},
	}
}

// TryLifecycleLock implements retention.Store: dev mode is one instance, so a mutex will do.
func (s *Store) TryLifecycleLock(ctx context.Context) (func(), bool, error) {
	if err := alive("lifecycle lock", ctx); err != nil {
		return nil, false, err
	}
	if !s.life.lock.TryLock() {
		return nil, false, nil
	}
	return s.life.lock.Unlock, true, nil
}

// RollUp implements retention.Store as internal/postgres does, a day at a time.
func (s *Store) RollUp(ctx context.Context, from, before time.Time, prefixDrop int) (time.Time, int, error) {
	if err := alive("roll up", ctx); err != nil {
		return time.Time{}, 0, err
	}
	before, from = before.UTC().Truncate(time.Hour), from.UTC().Truncate(time.Hour)
	s.mu.Lock()
	defer s.mu.Unlock()
	rolled := s.life.rolledBefore
	if !rolled.IsZero() && !rolled.Before(before) {
		return rolled, 0, nil
	}
	start := from
	if rolled.After(start) {
		start = rolled
	}
	// Skip the hours without history.
	next := before
	for _, r := range s.sends {
		if !r.Time.Before(start) && r.Time.Before(next) {
			next = r.Time
		}
	}
	for _, a := range s.attempts {
		if a.Outcome == otp.OutcomeApproved && !a.Time.Before(start) && a.Time.Before(next) {
			next = a.Time
		}
	}
	if h := next.Truncate(time.Hour); h.After(start) {
		start = h
	}
	end := start.Add(24 * time.Hour)
	if before.Before(end) {
		end = before
	}
	hours := 0
	if start.Before(end) {
		s.rollUpHours(start, end, prefixDrop)
		hours = int(end.Sub(start) / time.Hour)
	} else {
		end = before
	}
	s.life.rolledBefore = end
	return end, hours, nil
}

// rollUpHours counts the hours of [from, to) afresh, as Stats and FraudConversion count
// raw rows.
func (s *Store) rollUpHours(from, to time.Time, drop int) {
	if s.life.stats == nil {
		s.life.stats, s.life.conversion = map[statKey]int{}, map[convKey]convCount{}
	}
	in := func(t time.Time) bool { return !t.Before(from) && t.Before(to) }
	for k := range s.life.stats {
		if in(k.hour) {
			delete(s.life.stats, k)
		}
	}
	for k := range s.life.conversion {
		if in(k.hour) {
			delete(s.life.conversion, k)
		}
	}
	conv := func(t time.Time, phone string, add func(*convCount)) {
		p := fraud.Prefix(phone, drop)
		if p == "" {
			return
		}
		k := convKey{hour: t.Truncate(time.Hour), prefix: p}
		c := s.life.conversion[k]
		c.drop = drop
		add(&c)
		s.life.conversion[k] = c
	}
	for _, r := range s.sends {
		if !in(r.Time) {
			continue
		}
		s.life.stats[statKey{hour: r.Time.Truncate(time.Hour), app: r.AppID, kind: string(r.SendStatus), reason: r.Reason}]++
		conv(r.Time, r.Phone, func(c *convCount) {
			switch r.SendStatus {
			case otp.SendSent, otp.SendSending:
				c.sends++
			case otp.SendBlocked:
				c.blocked++
			}
		})
	}
	for _, a := range s.attempts {
		v := s.verifications[a.VerificationID]
		if a.Outcome != otp.OutcomeApproved || !in(a.Time) || v == nil {
			continue
		}
		s.life.stats[statKey{hour: a.Time.Truncate(time.Hour), app: v.AppID, kind: string(otp.OutcomeApproved)}]++
		conv(a.Time, v.Address, func(c *convCount) { c.approvals++ })
	}
}

// Purge implements retention.Store; history goes only before the rolled-up boundary.
func (s *Store) Purge(ctx context.Context, target string, before time.Time, limit int) (int, error) {
	if err := alive("purge", ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if target == "attempts" || target == "sends" || target == "verifications" {
		if s.life.rolledBefore.IsZero() {
			return 0, nil
		}
		if s.life.rolledBefore.Before(before) {
			before = s.life.rolledBefore
		}
	}
	n := 0
	switch target {
	case "event_outbox":
		s.ev.outbox = slices.DeleteFunc(s.ev.outbox, func(r *outboxRow) bool {
			gone := n < limit && r.status != events.Pending && r.event.CreatedAt.Before(before)
			if gone {
				n++
			}
			return gone
		})
	case "attempts":
		s.attempts = slices.DeleteFunc(s.attempts, func(a history.Attempt) bool {
			gone := n < limit && a.Time.Before(before)
			if gone {
				n++
			}
			return gone
		})
	case "sends":
		for id, r := range s.sends {
			if n < limit && r.Time.Before(before) {
				delete(s.sends, id)
				n++
			}
		}
	case "verifications":
		n = s.purgeVerifications(before, limit)
	case "stats_hourly":
		n = purgeHours(s.life.stats, func(k statKey) time.Time { return k.hour }, before, limit)
	case "conversion_hourly":
		n = purgeHours(s.life.conversion, func(k convKey) time.Time { return k.hour }, before, limit)
	default:
		return 0, fmt.Errorf("inmem: purge: no purge target %q", target)
	}
	return n, nil
}

// purgeVerifications deletes verifications created before before that no send or attempt
// refers to any more, as internal/postgres does.
func (s *Store) purgeVerifications(before time.Time, limit int) int {
	referred := map[string]bool{}
	for _, r := range s.sends {
		referred[r.VerificationID] = true
	}
	for _, a := range s.attempts {
		referred[a.VerificationID] = true
	}
	n := 0
	for id, v := range s.verifications {
		if n >= limit || !v.CreatedAt.Before(before) || referred[id] {
			continue
		}
		pk := phoneKey(v.AppID, v.Address)
		if s.pending[pk] == id {
			delete(s.pending, pk)
		}
		if s.byPhone[pk] = slices.DeleteFunc(s.byPhone[pk], func(other string) bool { return other == id }); len(s.byPhone[pk]) == 0 {
			delete(s.byPhone, pk)
		}
		delete(s.verifications, id)
		n++
	}
	return n
}

func purgeHours[K comparable, V any](m map[K]V, hour func(K) time.Time, before time.Time, limit int) int {
	n := 0
	for k := range m {
		if n < limit && hour(k).Before(before) {
			delete(m, k)
			n++
		}
	}
	return n
}

// Oldest implements retention.Store.
func (s *Store) Oldest(ctx context.Context, target string) (time.Time, error) {
	if err := alive("oldest", ctx); err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest time.Time
	see := func(t time.Time) {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	switch target {
	case "event_outbox":
		for _, r := range s.ev.outbox {
			if r.status != events.Pending {
				see(r.event.CreatedAt)
			}
		}
	case "attempts":
		for _, a := range s.attempts {
			see(a.Time)
		}
	case "sends":
		for _, r := range s.sends {
			see(r.Time)
		}
	case "verifications":
		for _, v := range s.verifications {
			see(v.CreatedAt)
		}
	case "stats_hourly":
		for k := range s.life.stats {
			see(k.hour)
		}
	case "conversion_hourly":
		for k := range s.life.conversion {
			see(k.hour)
		}
	default:
		return time.Time{}, fmt.Errorf("inmem: oldest: no purge target %q", target)
	}
	return oldest, nil
}
