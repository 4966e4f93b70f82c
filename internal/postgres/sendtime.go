package postgres

import (
	"time"

	"github.com/google/uuid"
)

// sendMargin is how far from the time in its UUIDv7 id a send's row may be dated and still
// be found by sendWindow. The service makes a send's id and dates its row at the same moment
// on one clock, so a minute is already generous; the window's width costs nothing, as it
// names one or two day partitions either way.
const sendMargin = time.Hour

// sendWindow is the span of creation times in which the sends with ids are looked for
// first: sends is partitioned by day of created_at (migrations/00100), and a lookup by id
// alone would probe every day's index. ok is false when an id is not a UUIDv7, whose time is
// unknown. A send dated outside the window (a clock that is not the id's, as in tests) is
// not found by it: callers look again without it for the ids it missed.
func sendWindow(ids ...string) (from, to time.Time, ok bool) {
	for i, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 {
			return time.Time{}, time.Time{}, false
		}
		sec, nsec := u.Time().UnixTime()
		at := time.Unix(sec, nsec).UTC()
		if i == 0 || at.Before(from) {
			from = at
		}
		if i == 0 || at.After(to) {
			to = at
		}
	}
	return from.Add(-sendMargin), to.Add(sendMargin), len(ids) > 0
}
