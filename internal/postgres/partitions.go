package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"otpgate/internal/retention"
)

var _ retention.Partitioner = (*Store)(nil)

// partitionLockTimeout bounds how long making or dropping a day partition waits for its
// moment's ACCESS EXCLUSIVE lock on the history table: while it waits, every write to the
// table queues behind it. A statement that gives up is tried again, then left to the next
// pass.
const partitionLockTimeout = 100 * time.Millisecond

// partitionTries is how many times a partition statement is tried before the pass leaves it.
const partitionTries = 5

// partitionedTables are the history tables partitioned by day (migrations/00100).
var partitionedTables = []string{"sends", "attempts"}

// dayPartition matches the name of a day partition, such as sends_p20261203.
var dayPartition = regexp.MustCompile(`^(sends|attempts)_p([0-9]{8})$`)

// PrepareDays implements retention.Partitioner with otpgate_history_partition, which makes a
// day's partition unless it exists or the default partition already holds rows of the day.
func (s *Store) PrepareDays(ctx context.Context, from, through time.Time) (int, error) {
	made := 0
	for day := utcDay(from); !day.After(utcDay(through)); day = day.AddDate(0, 0, 1) {
		for _, table := range partitionedTables {
			err := s.partitionStatement(ctx, "prepare days", func(tx pgx.Tx) error {
				var ok bool
				if err := tx.QueryRow(ctx, `SELECT otpgate_history_partition($1, $2::date)`, table, day.Format(time.DateOnly)).Scan(&ok); err != nil {
					return err
				}
				if ok {
					made++
				}
				return nil
			})
			if err != nil {
				return made, err
			}
		}
	}
	return made, nil
}

// DropDays implements retention.Partitioner: each day partition of target that ends at or
// before the bound is counted and dropped — a DROP TABLE, not a DELETE of its rows.
func (s *Store) DropDays(ctx context.Context, target string, before time.Time) (int, int, error) {
	t, err := findTarget(target)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: drop days: %w", err)
	}
	if !t.partitioned {
		return 0, 0, nil
	}
	if before, err = s.purgeBound(ctx, t, before); err != nil || before.IsZero() {
		return 0, 0, wrap("drop days of "+target, err)
	}
	parts, err := s.dayPartitions(ctx, target)
	if err != nil {
		return 0, 0, wrap("drop days of "+target, err)
	}
	days, rows := 0, 0
	for _, p := range parts {
		if p.day.Add(24 * time.Hour).After(before) {
			break // in day order: the rest end later still
		}
		// Counted before the drop, for the purged-rows figures: rows are written at the
		// time of their creation, so none is added to a day this old meanwhile.
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{p.name}.Sanitize()).Scan(&n); err != nil {
			return days, rows, wrap("drop days of "+target, err)
		}
		err := s.partitionStatement(ctx, "drop days of "+target, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `DROP TABLE `+pgx.Identifier{p.name}.Sanitize())
			return err
		})
		if err != nil {
			return days, rows, err
		}
		days, rows = days+1, rows+n
	}
	return days, rows, nil
}

// dayPart is one day partition of a history table.
type dayPart struct {
	name string
	day  time.Time
}

// dayPartitions lists table's day partitions, oldest first.
func (s *Store) dayPartitions(ctx context.Context, table string) ([]dayPart, error) {
	rs, _ := s.pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = $1::regclass ORDER BY c.relname`, table)
	names, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var out []dayPart
	for _, name := range names {
		m := dayPartition.FindStringSubmatch(name)
		if m == nil || m[1] != table {
			continue // the default partition
		}
		day, err := time.Parse("20060102", m[2])
		if err != nil {
			return nil, fmt.Errorf("%w: partition %s: %w", errBug, name, err)
		}
		out = append(out, dayPart{name: name, day: day})
	}
	return out, nil
}

// partitionStatement runs fn in a transaction whose locks wait at most partitionLockTimeout,
// trying again a few times when a lock was not granted in time.
func (s *Store) partitionStatement(ctx context.Context, op string, fn func(pgx.Tx) error) error {
	var err error
	for try := range partitionTries {
		if try > 0 {
			select {
			case <-time.After(time.Duration(try) * 50 * time.Millisecond):
			case <-ctx.Done():
				return wrap(op, errors.Join(err, ctx.Err()))
			}
		}
		err = s.inTx(ctx, op, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, partitionLockTimeout.Milliseconds())); err != nil {
				return err
			}
			return fn(tx)
		})
		if !lockNotAvailable(err) {
			return err
		}
	}
	return err
}

// lockNotAvailable reports whether err is a statement that gave up waiting for a lock.
func lockNotAvailable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// utcDay is the start of t's UTC day.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
