package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// PurgeStatement is target's purge statement and its arguments, for EXPLAIN.
func PurgeStatement(target string, before time.Time, limit int) (string, pgx.NamedArgs) {
	t, err := findTarget(target)
	if err != nil {
		panic(err)
	}
	return t.purge, purgeArgs(before, limit)
}
