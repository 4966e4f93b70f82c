package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/pii"
)

// sendRow is one group of the sends table.
type sendRow struct {
	phone, ip, status string
	n                 int
}

// sendRows groups the sends table by phone, client IP and status. The table holds each
// phone sealed (docs/privacy.md): the rows are opened with the servers' keys.
func sendRows(t testing.TB, dsn string) []sendRow {
	t.Helper()
	keys := dataKeys(t)
	byGroup := map[sendRow]int{}
	query(t, dsn, `SELECT phone_sealed, client_ip, status, count(*) FROM sends GROUP BY 1, 2, 3`, func(r pgx.Rows) error {
		var s sendRow
		var sealed string
		var n int
		if err := r.Scan(&sealed, &s.ip, &s.status, &n); err != nil {
			return err
		}
		phone, err := keys.Open(sealed)
		if err != nil {
			return err
		}
		s.phone = phone
		byGroup[s] += n
		return nil
	})
	out := make([]sendRow, 0, len(byGroup))
	for s, n := range byGroup {
		s.n = n
		out = append(out, s)
	}
	return out
}

// dataKeys are the personal-data keys of a server with testSecret.
func dataKeys(t testing.TB) *pii.Keys {
	t.Helper()
	k, err := pii.New([]byte(testSecret), "")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// stored is what the history's rows hold for address in place of it: its keyed index.
func stored(t testing.TB, address string) string {
	t.Helper()
	return dataKeys(t).Index(address)
}

// sentVerifications returns the verification ids that have a sent row.
func sentVerifications(t testing.TB, dsn string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	query(t, dsn, `SELECT verification_id::text FROM sends WHERE status = 'sent'`, func(r pgx.Rows) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		out[id] = true
		return nil
	})
	return out
}

// sentRowsOf waits until every one of ids has a sent row, or until outcomeDelay has
// passed, and returns the verification ids that have one: a running server writes a send's
// outcome in batches, shortly after its 201.
func sentRowsOf(t testing.TB, dsn string, ids []string) map[string]bool {
	t.Helper()
	var rows map[string]bool
	waitUntil(outcomeDelay, func() bool {
		rows = sentVerifications(t, dsn)
		for _, id := range ids {
			if !rows[id] {
				return false
			}
		}
		return true
	})
	return rows
}

// outcomeDelay bounds how long after its answer a send's outcome reaches PostgreSQL: the
// outcome writer's 100ms, with room for a busy machine.
const outcomeDelay = 3 * time.Second

// query runs sql on its own connection and calls each for every row.
func query(t testing.TB, dsn, sql string, each func(pgx.Rows) error, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
