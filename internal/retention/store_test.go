package retention_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"otpgate/internal/retention"
)

// memStore is a retention.Store over rows in memory: the creation times of the rows of two
// history targets, and an hourly rollup row per hour of history counted.
type memStore struct {
	lock   sync.Mutex
	mu     sync.Mutex
	rows   map[string][]time.Time
	rolled time.Time // the rolled-up boundary; zero before the first roll-up
}

// oldStore holds n sends made 100 days ago, each with its verification.
func oldStore(n int) *memStore {
	at := time.Now().UTC().Add(-100 * 24 * time.Hour)
	s := &memStore{rows: map[string][]time.Time{}}
	for range n {
		s.rows["sends"] = append(s.rows["sends"], at)
		s.rows["verifications"] = append(s.rows["verifications"], at)
	}
	return s
}

func (s *memStore) LifecycleTargets() []retention.Target {
	return []retention.Target{
		{Name: "sends", Keep: retention.KeepHistory},
		{Name: "verifications", Keep: retention.KeepHistory},
		{Name: "rollups", Keep: retention.KeepRollups},
	}
}

func (s *memStore) TryLifecycleLock(context.Context) (func(), bool, error) {
	if !s.lock.TryLock() {
		return nil, false, nil
	}
	return s.lock.Unlock, true, nil
}

// RollUp counts a day of hours at most, from the boundary or the first hour of history
// after it, whichever is later, as the real stores do.
func (s *memStore) RollUp(_ context.Context, from, before time.Time, _ int) (time.Time, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before, start := before.Truncate(time.Hour), later(from.Truncate(time.Hour), s.rolled)
	if !s.rolled.IsZero() && !s.rolled.Before(before) {
		return s.rolled, 0, nil
	}
	var first time.Time
	for _, t := range s.rows["sends"] {
		if !t.Before(start) && t.Before(before) && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if first.IsZero() {
		s.rolled = before
		return before, 0, nil
	}
	start = later(start, first.Truncate(time.Hour))
	end := earlier(start.Add(24*time.Hour), before)
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		if slices.ContainsFunc(s.rows["sends"], func(t time.Time) bool { return t.Truncate(time.Hour).Equal(h) }) {
			s.rows["rollups"] = append(s.rows["rollups"], h)
		}
	}
	s.rolled = end
	return end, int(end.Sub(start) / time.Hour), nil
}

// Purge deletes history only before the rolled-up boundary.
func (s *memStore) Purge(_ context.Context, target string, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.ContainsFunc(s.LifecycleTargets(), func(t retention.Target) bool { return t.Name == target }) {
		return 0, fmt.Errorf("no purge target %q", target)
	}
	if target != "rollups" {
		before = earlier(before, s.rolled)
	}
	n := 0
	s.rows[target] = slices.DeleteFunc(s.rows[target], func(t time.Time) bool {
		gone := n < limit && t.Before(before)
		if gone {
			n++
		}
		return gone
	})
	return n, nil
}

func (s *memStore) Oldest(_ context.Context, target string) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rows[target]) == 0 {
		return time.Time{}, nil
	}
	return slices.MinFunc(s.rows[target], time.Time.Compare), nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
