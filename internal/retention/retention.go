// Package retention ends history: verifications, sends and attempts older than the history
// retention are deleted, after their hours were counted into hourly rollups that keep the
// console's charts and the fraud conversion figures; rollups are deleted in turn once older
// than their own horizon. One instance at a time does it, in short statements. A store whose
// history tables are partitioned by day (Partitioner) has its days made ahead and its whole
// past days dropped, not deleted row by row.
//
// The package owns the job (when, in what order, how much at a time, how far behind);
// the store owns the statements (internal/postgres), behind Store. Dev mode, which keeps
// history in memory until it exits, runs no retention.
package retention

import (
	"context"
	"time"
)

// MaxBatch is the most rows one purge statement deletes: a statement that size holds its row
// locks and its share of the write-ahead log for a few milliseconds, never long enough for a
// send or a check to notice.
const MaxBatch = 5000

// DefaultRollupRetention is how long hourly rollups are kept: a year and a month, so that a
// chart can compare a month with the same month a year earlier.
const DefaultRollupRetention = 400 * 24 * time.Hour

// DefaultInterval is the pause between passes unless Options say otherwise.
const DefaultInterval = 15 * time.Minute

// Keep names the horizon a target's rows are kept for.
type Keep int

const (
	// KeepHistory rows are kept for the history retention, and only rows of hours already
	// counted in the rollups are ever purged.
	KeepHistory Keep = iota
	// KeepRollups rows are the rollups themselves, kept for the rollup retention.
	KeepRollups
)

// Target is one table the job empties of old rows.
type Target struct {
	// Name is the table's, as logs and metrics show it.
	Name string
	Keep Keep
}

// Store is what the job needs of the history store. Implementation: internal/postgres;
// internal/storetest holds the behaviour every store that implements it must show.
type Store interface {
	// TryLifecycleLock takes the lock that lets one instance at a time roll up and purge,
	// unless another holds it: ok is false then. release lets it go; call it once.
	TryLifecycleLock(ctx context.Context) (release func(), ok bool, err error)
	// RollUp counts the history of whole hours into the hourly rollups, oldest first, and
	// moves the rolled-up boundary past them, towards before: from the boundary (the first
	// time, from the hour of the oldest history), at most a day of hours per call, each hour
	// whole or not at all. Hours before from are not counted (their rollups would be
	// deleted at once); the boundary moves over them, as over hours without history.
	// prefixDrop is the fraud guard's prefix setting, by which the conversion rollups are
	// counted. It returns the boundary after the call (before, or later, once everything
	// older is counted) and how many hours it counted. Counting an hour a second time gives
	// the same rollups; the boundary never moves back.
	RollUp(ctx context.Context, from, before time.Time, prefixDrop int) (boundary time.Time, hours int, err error)
	// LifecycleTargets lists the tables Purge empties, in the order they are purged: rows
	// that refer to others before those they refer to.
	LifecycleTargets() []Target
	// Purge deletes, in one statement, at most limit rows of target created before before,
	// and returns how many. A KeepHistory target never loses a row created at or after the
	// rolled-up boundary, whatever before says.
	Purge(ctx context.Context, target string, before time.Time, limit int) (int, error)
	// Oldest returns when the oldest row of target was created; zero when it has none.
	Oldest(ctx context.Context, target string) (time.Time, error)
}

// DaysAhead is how many days after today's a pass makes the partitions of, so that a day's
// rows find theirs even when passes fail for a while.
const DaysAhead = 3

// Partitioner is what a store whose history tables are partitioned by UTC day adds to Store.
// A pass makes the days ahead first, and drops the whole days past a target's horizon before
// Purge deletes, in batches, what is left (rows of a day without its own partition).
type Partitioner interface {
	// PrepareDays makes the partitions of every day from the one holding from to the one
	// holding through, where they are missing, and answers how many it made.
	PrepareDays(ctx context.Context, from, through time.Time) (int, error)
	// DropDays drops the partitions of target whose whole day lies before before — for a
	// KeepHistory target, also before the rolled-up boundary — and answers how many days it
	// dropped and how many rows they held. A target without partitions has none to drop.
	DropDays(ctx context.Context, target string, before time.Time) (days, rows int, err error)
}

// hourStart is the start of the hour holding t, a whole multiple of an hour since the epoch.
func hourStart(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }
