package migrations

import "testing"

// TestHistoryPartitionsKeepTheRows upgrades a database with history to day partitions
// (00100) and back: every row is kept, each in its day's partition (rows older than 400
// days in the default one), and the sequence of attempts' ids goes on.
func TestHistoryPartitionsKeepTheRows(t *testing.T) {
	t.Parallel()
	db, p, exec := migratedTo(t, 91)
	// A verification, a send and a check a day, for the last ten days and one 500 days ago.
	exec(`INSERT INTO verifications (id, phone, channel, locale, status, max_attempts, created_at, expires_at, closed_at)
		SELECT md5(d::text)::uuid, '+8190' || d, 'sms', 'en', 'approved', 5, now() - d * interval '1 day',
			now() - d * interval '1 day', now() - d * interval '1 day'
		FROM unnest(ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 500]) AS d`)
	exec(`INSERT INTO sends (id, verification_id, phone, status, created_at, updated_at)
		SELECT gen_random_uuid(), id, phone, 'sent', created_at, created_at FROM verifications`)
	exec(`INSERT INTO attempts (verification_id, outcome, created_at) SELECT id, 'approved', created_at FROM verifications`)
	const fingerprint = `SELECT (SELECT md5(string_agg(s::text, ',' ORDER BY s.id)) FROM sends s)
		|| (SELECT md5(string_agg(a::text, ',' ORDER BY a.id)) FROM attempts a)`
	var before, after, partitions, inDefault string
	if err := db.QueryRowContext(t.Context(), fingerprint).Scan(&before); err != nil {
		t.Fatal(err)
	}

	if _, err := p.UpTo(t.Context(), 100); err != nil {
		t.Fatalf("up to 100: %v", err)
	}
	if err := db.QueryRowContext(t.Context(), fingerprint).Scan(&after); err != nil || after != before {
		t.Errorf("rows after the upgrade: got %q, %v; want them as before", after, err)
	}
	err := db.QueryRowContext(t.Context(), `SELECT
			(SELECT count(DISTINCT tableoid) || ' ' || count(*) FILTER (WHERE tableoid = 'sends_default'::regclass) FROM sends),
			(SELECT count(*) FILTER (WHERE tableoid = 'attempts_default'::regclass) FROM attempts)`).Scan(&partitions, &inDefault)
	if err != nil || partitions != "11 1" || inDefault != "1" {
		t.Errorf("sends in %q partitions and default, attempts in default %q, %v; want 11 partitions (ten days and the default), the old row in the default ones", partitions, inDefault, err)
	}
	exec(`INSERT INTO attempts (verification_id, outcome, created_at) SELECT id, 'invalid_code', now() FROM verifications LIMIT 1`)

	if _, err := p.DownTo(t.Context(), 91); err != nil {
		t.Fatalf("down to 91: %v", err)
	}
	exec(`DELETE FROM attempts WHERE outcome = 'invalid_code'`)
	if err := db.QueryRowContext(t.Context(), fingerprint).Scan(&after); err != nil || after != before {
		t.Errorf("rows after the downgrade: got %q, %v; want them as before", after, err)
	}
	if _, err := p.UpTo(t.Context(), 100); err != nil {
		t.Fatalf("up to 100 again: %v", err)
	}
}
