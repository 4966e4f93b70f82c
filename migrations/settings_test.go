package migrations

import "testing"

// TestSettingsMoveIntoOneTable upgrades a database whose fraud and spend settings and apps'
// version sit in tables of their own (as versions before 00201 kept them) and finds each in
// its row of settings, version and document unchanged; the way down puts them back.
func TestSettingsMoveIntoOneTable(t *testing.T) {
	t.Parallel()
	db, p, exec := migratedTo(t, 200)
	exec(`UPDATE fraud_settings SET version = 7, config = '{"fraud_guard": "shadow"}', updated_at = now()`)
	exec(`UPDATE spend_settings SET version = 3, config = '{"currency": "EUR"}', updated_at = now()`)
	exec(`UPDATE apps_version SET version = 12`)
	if _, err := p.UpTo(t.Context(), 201); err != nil {
		t.Fatalf("up to 201: %v", err)
	}
	want := map[string]struct {
		version int64
		value   string
	}{"fraud": {7, `{"fraud_guard": "shadow"}`}, "spend": {3, `{"currency": "EUR"}`}, "apps": {12, ""}}
	rows, err := db.QueryContext(t.Context(), `SELECT name, version, coalesce(value::text, '') FROM settings`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var name, value string
		var version int64
		if err := rows.Scan(&name, &version, &value); err != nil {
			t.Fatal(err)
		}
		if w := want[name]; version != w.version || value != w.value {
			t.Errorf("%s: got %d %q, want %d %q", name, version, value, w.version, w.value)
		}
		n++
	}
	if err := rows.Close(); err != nil || n != len(want) {
		t.Errorf("got %d rows (%v), want %d", n, err, len(want))
	}

	if _, err := p.DownTo(t.Context(), 200); err != nil {
		t.Fatalf("down to 200: %v", err)
	}
	var fraudV, spendV, appsV int64
	var fraudDoc, spendDoc string
	if err := db.QueryRowContext(t.Context(), `SELECT f.version, f.config::text, s.version, s.config::text, a.version
		FROM fraud_settings f, spend_settings s, apps_version a`).Scan(&fraudV, &fraudDoc, &spendV, &spendDoc, &appsV); err != nil {
		t.Fatal(err)
	}
	if fraudV != 7 || fraudDoc != want["fraud"].value || spendV != 3 || spendDoc != want["spend"].value || appsV != 12 {
		t.Errorf("down: got fraud %d %s, spend %d %s, apps %d; want them as they were", fraudV, fraudDoc, spendV, spendDoc, appsV)
	}
	if _, err := p.Up(t.Context()); err != nil {
		t.Fatalf("up: %v", err)
	}
}
