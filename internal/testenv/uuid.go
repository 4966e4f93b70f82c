package testenv

import (
	"time"

	"github.com/google/uuid"
)

// UUIDAt is a UUIDv7 made at t, as the server makes row ids, for seeding history of the
// past: retention tells old rows by the time in their ids.
func UUIDAt(t time.Time) uuid.UUID {
	u := uuid.Must(uuid.NewV7())
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	return u
}
