package migrations

import "testing"

// TestFraudReasonsAreMasked upgrades a database whose fraud blocks, their audit entries and
// their events name the tripping send's number whole (as versions before 00175 wrote them)
// and finds each naming the number's mask, as the guard now writes it; text naming no
// tripping send, and reasons already masked, are left as they were.
func TestFraudReasonsAreMasked(t *testing.T) {
	t.Parallel()
	db, p, exec := migratedTo(t, 174)
	const (
		whole  = "12 unapproved sends; tripped by a send to +819012345678 from 203.0.113.7"
		masked = "12 unapproved sends; tripped by a send to +819*******78 from 203.0.113.7"
		other  = "5 distinct countries from one network"
	)
	exec(`INSERT INTO webhook_endpoints (id, app_id, url, secret_sealed, event_types, created_at)
		VALUES ('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-000000000000', 'http://receiver.test/',
			'\x00', ARRAY['fraud.block_started', 'fraud.block_ended'], now())`)
	for i, reason := range []string{whole, masked, other} {
		id := []string{"00000000-0000-0000-0000-0000000000b1", "00000000-0000-0000-0000-0000000000b2", "00000000-0000-0000-0000-0000000000b3"}[i]
		exec(`INSERT INTO fraud_blocks (id, scope, target, mode, reason, started_at, ends_at)
			VALUES ($1, 'prefix', '+81901234', 'enforce', $2, now(), now() + interval '1 hour')`, id, reason)
		exec(`INSERT INTO admin_actions (action, target, detail, created_at)
			VALUES ('fraud_block_started', 'prefix:+81901234', 'enforce block until 2030-01-01T00:00:00Z: ' || $1, now())`, reason)
		for _, typ := range []string{"fraud.block_started", "fraud.block_ended"} {
			exec(`INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
				VALUES (gen_random_uuid(), '00000000-0000-0000-0000-0000000000e1', $1, $2::uuid,
					jsonb_build_object('block_id', $2::text, 'reason', $3::text), now(), now())`, typ, id, reason)
		}
	}
	// An audit entry of another action keeps its words (no fraud block writes them).
	exec(`INSERT INTO admin_actions (action, target, detail, created_at) VALUES ('app_update', 'app:x', $1, now())`, whole)

	if _, err := p.UpTo(t.Context(), 175); err != nil {
		t.Fatalf("up to 175: %v", err)
	}
	rows, err := db.QueryContext(t.Context(), `
		SELECT 'block', reason FROM fraud_blocks
		UNION ALL SELECT action, coalesce(substring(detail FROM ': (.*)$'), detail) FROM admin_actions
		UNION ALL SELECT type, data->>'reason' FROM event_outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]map[string]int{}
	for rows.Next() {
		var kind, reason string
		if err := rows.Scan(&kind, &reason); err != nil {
			t.Fatal(err)
		}
		if got[kind] == nil {
			got[kind] = map[string]int{}
		}
		got[kind][reason]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"block", "fraud_block_started", "fraud.block_started", "fraud.block_ended"} {
		if g := got[kind]; g[whole] != 0 || g[masked] != 2 || g[other] != 1 {
			t.Errorf("%s: got %v, want the whole number masked, the masked reason and the other as they were", kind, g)
		}
	}
	if got["app_update"][whole] != 1 {
		t.Errorf("another action's entry: got %v, want it as it was", got["app_update"])
	}
	if _, err := p.Up(t.Context()); err != nil {
		t.Fatalf("up: %v", err)
	}
}

// TestBlockListReasonsAreMasked upgrades a database whose hourly rollups and send.blocked
// events name a block-listed number whole (as versions before 00176 wrote them) and finds
// each naming it masked, the counts of numbers that share a mask (and of a reason already
// masked) summed; other reasons are left as they were.
func TestBlockListReasonsAreMasked(t *testing.T) {
	t.Parallel()
	db, p, exec := migratedTo(t, 175)
	const app = "00000000-0000-0000-0000-000000000000"
	for reason, n := range map[string]int{
		"block_list number +447911123456": 2, "block_list number +447922222256": 3, // one mask
		"block_list number +447*******56": 4, "block_list prefix +234701": 5, "phone 1/1m": 6,
	} {
		exec(`INSERT INTO stats_hourly (hour, app_id, kind, reason, n) VALUES ('2030-01-01T00:00:00Z', $1, 'blocked', $2, $3)`, app, reason, n)
	}
	exec(`INSERT INTO webhook_endpoints (id, app_id, url, secret_sealed, event_types, created_at)
		VALUES ('00000000-0000-0000-0000-0000000000e1', $1, 'http://receiver.test/', '\x00', ARRAY['send.blocked'], now())`, app)
	for _, reason := range []string{"block_list number +447911123456", "block_list prefix +234701"} {
		exec(`INSERT INTO event_outbox (event_id, endpoint_id, type, data, created_at, next_attempt_at)
			VALUES (gen_random_uuid(), '00000000-0000-0000-0000-0000000000e1', 'send.blocked', jsonb_build_object('reason', $1::text), now(), now())`, reason)
	}

	if _, err := p.UpTo(t.Context(), 176); err != nil {
		t.Fatalf("up to 176: %v", err)
	}
	rows, err := db.QueryContext(t.Context(), `SELECT 'stats', reason, n FROM stats_hourly
		UNION ALL SELECT 'event', data->>'reason', 1 FROM event_outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var kind, reason string
		var n int
		if err := rows.Scan(&kind, &reason, &n); err != nil {
			t.Fatal(err)
		}
		got[kind+" "+reason] += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"stats block_list number +447*******56": 9, "stats block_list prefix +234701": 5, "stats phone 1/1m": 6,
		"event block_list number +447*******56": 1, "event block_list prefix +234701": 1,
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: got %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
}
