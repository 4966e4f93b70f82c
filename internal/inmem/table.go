package inmem

import (
	"slices"
	"strings"
	"time"
)

// What every feature's maps need, once: dev mode's store is complete (docs/architecture.md,
// "Stores"), so each feature's file should hold what is particular to it and no more.

// collect returns the values of m that keep accepts, ordered by cmp; nil when none is.
func collect[K comparable, V any](m map[K]V, keep func(V) bool, cmp func(a, b V) int) []V {
	var out []V
	for _, v := range m {
		if keep(v) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, cmp)
	return out
}

// oldestFirst orders records as Postgres's ORDER BY created_at, id does; key gives a
// record's creation time and id.
func oldestFirst[V any](key func(V) (time.Time, string)) func(a, b V) int {
	return func(a, b V) int {
		at, aid := key(a)
		bt, bid := key(b)
		if c := at.Compare(bt); c != 0 {
			return c
		}
		return strings.Compare(aid, bid)
	}
}

// newestFirst is oldestFirst reversed: ORDER BY created_at DESC, id DESC.
func newestFirst[V any](key func(V) (time.Time, string)) func(a, b V) int {
	older := oldestFirst(key)
	return func(a, b V) int { return older(b, a) }
}

// part returns the store's tables of type T, made on first use (then T's init, if it has
// one, makes its maps); call with s.mu held. Each feature's file declares its tables and
// reaches them through part, so that a new feature adds no field to Store. The key is the
// type itself, so two features cannot share tables by accident.
func part[T any](s *Store) *T {
	key := any((*T)(nil))
	if p, ok := s.parts[key]; ok {
		return p.(*T)
	}
	p := new(T)
	if i, ok := any(p).(interface{ init() }); ok {
		i.init()
	}
	s.parts[key] = p
	return p
}
