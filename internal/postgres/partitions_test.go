package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/postgres"
	"otpgate/internal/retention"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

// forbidRowDeletes makes every DELETE of a row of sends or attempts fail, whether a
// statement of its own or a cascade from verifications: what goes after it went by DROP.
func forbidRowDeletes(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for _, q := range []string{
		`CREATE FUNCTION forbid_row_delete() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'a row of % was deleted one by one', TG_TABLE_NAME; END $$`,
		`CREATE TRIGGER forbid_row_delete BEFORE DELETE ON sends FOR EACH ROW EXECUTE FUNCTION forbid_row_delete()`,
		`CREATE TRIGGER forbid_row_delete BEFORE DELETE ON attempts FOR EACH ROW EXECUTE FUNCTION forbid_row_delete()`,
	} {
		if _, err := pool.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
}

// partitionOf names the partition a table's day is stored in, "" when it has none.
func partitionOf(t *testing.T, pool *pgxpool.Pool, table string, day time.Time) string {
	t.Helper()
	var name *string
	if err := pool.QueryRow(t.Context(), `SELECT to_regclass($1)::text`, table+"_p"+day.Format("20060102")).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name == nil {
		return ""
	}
	return *name
}

// TestPurgeDropsWholeDays seeds four days of history in their day partitions and runs a
// retention pass over them: the two days wholly past the horizon are dropped, partitions and
// all, without a row deleted one by one (a trigger refuses any such delete); the day of the
// horizon and a later one keep every row as it was, down to its row version.
func TestPurgeDropsWholeDays(t *testing.T) {
	t.Parallel()
	db := stores.OpenPostgres(t)
	s := postgres.New(db, testenv.DataKeys())
	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	day := func(n int) time.Time { return today.AddDate(0, 0, -n) }
	if _, err := s.PrepareDays(t.Context(), day(9), today); err != nil {
		t.Fatalf("PrepareDays: %v", err)
	}
	const perDay = 200 // verifications a day, each with two sends and a check
	for _, n := range []int{9, 8, 7, 3} {
		seedOld(t, db, day(n).Add(time.Hour), time.Minute, perDay)
	}
	if n := count(t, db, `SELECT count(*) FROM ONLY sends_default`); n != 0 {
		t.Fatalf("got %d sends in the default partition, want every one in its day's", n)
	}
	forbidRowDeletes(t, db)
	keptSends := rows(t, db, `SELECT md5(string_agg(s.xmin::text || s::text, ',' ORDER BY s.id)) FROM sends s WHERE created_at >= $1`, day(7))
	keptAttempts := rows(t, db, `SELECT md5(string_agg(a.xmin::text || a::text, ',' ORDER BY a.id)) FROM attempts a WHERE created_at >= $1`, day(7))

	// Before any roll-up, no day goes, whatever it is asked.
	if days, n, err := s.DropDays(t.Context(), "sends", now); err != nil || days != 0 || n != 0 {
		t.Errorf("DropDays before a roll-up: got %d days, %d rows, %v; want none", days, n, err)
	}

	j := retention.New(s, discard(), retention.Options{Retention: 7 * 24 * time.Hour})
	j.Now = func() time.Time { return now }
	r, err := j.Pass(t.Context())
	if err != nil {
		t.Fatalf("Pass: %v", err)
	}
	if r.Dropped["sends"] != 2 || r.Dropped["attempts"] != 2 || r.Purged["sends"] != 2*2*perDay || r.Purged["attempts"] != 2*perDay {
		t.Errorf("report: got %v days dropped and %v rows purged; want 2 days and %d sends, %d attempts of each table",
			r.Dropped, r.Purged, 2*2*perDay, 2*perDay)
	}
	if r.Purged["verifications"] != 2*perDay {
		t.Errorf("got %d verifications purged, want the %d of the dropped days", r.Purged["verifications"], 2*perDay)
	}
	for _, table := range []string{"sends", "attempts"} {
		for _, n := range []int{9, 8} {
			if p := partitionOf(t, db, table, day(n)); p != "" {
				t.Errorf("%s of %s: still there, want it dropped", p, day(n).Format(time.DateOnly))
			}
		}
		for _, n := range []int{7, 3, 0} {
			if p := partitionOf(t, db, table, day(n)); p == "" {
				t.Errorf("%s of %s: gone, want it kept", table, day(n).Format(time.DateOnly))
			}
		}
	}
	if got := rows(t, db, `SELECT md5(string_agg(s.xmin::text || s::text, ',' ORDER BY s.id)) FROM sends s WHERE created_at >= $1`, day(7)); got[0] != keptSends[0] {
		t.Errorf("the kept days' sends changed")
	}
	if got := rows(t, db, `SELECT md5(string_agg(a.xmin::text || a::text, ',' ORDER BY a.id)) FROM attempts a WHERE created_at >= $1`, day(7)); got[0] != keptAttempts[0] {
		t.Errorf("the kept days' attempts changed")
	}
	if n := count(t, db, `SELECT count(*) FROM sends`); n != 2*2*perDay {
		t.Errorf("got %d sends left, want the %d of the kept days", n, 2*2*perDay)
	}
	if j.DroppedDays("sends") != 2 {
		t.Errorf("got %d days of sends dropped by the job, want 2", j.DroppedDays("sends"))
	}
}

// TestPrepareDays makes days ahead: a day whose rows are already in the default partition
// keeps them there (a partition over them could not be made), later days get their own
// partitions, and rows written then go to them.
func TestPrepareDays(t *testing.T) {
	t.Parallel()
	db := stores.OpenPostgres(t)
	s := postgres.New(db, testenv.DataKeys())
	d := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -20)
	seedOld(t, db, d.Add(time.Hour), time.Minute, 10)
	made, err := s.PrepareDays(t.Context(), d, d.Add(24*time.Hour))
	if err != nil || made != 2 {
		t.Fatalf("PrepareDays: got %d made, %v; want the next day of sends and of attempts", made, err)
	}
	if p := partitionOf(t, db, "sends", d); p != "" {
		t.Errorf("got %s over rows of the default partition, want none", p)
	}
	seedOld(t, db, d.Add(25*time.Hour), time.Minute, 10)
	for _, c := range []struct {
		at   time.Time
		want string
	}{{d.Add(time.Hour), "sends_default"}, {d.Add(25 * time.Hour), "sends_p" + d.Add(24*time.Hour).Format("20060102")}} {
		got := rows(t, db, `SELECT DISTINCT tableoid::regclass::text FROM sends WHERE created_at >= $1 AND created_at < $1::timestamptz + interval '1 hour'`, c.at)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("sends of %v: stored in %v, want %s", c.at, got, c.want)
		}
	}
	if again, err := s.PrepareDays(t.Context(), d, d.Add(24*time.Hour)); err != nil || again != 0 {
		t.Errorf("PrepareDays again: got %d made, %v; want none", again, err)
	}
}
