package postgres_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/postgres"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func dataKeys(t *testing.T, spec string) *pii.Keys {
	t.Helper()
	k, err := pii.New([]byte(testenv.DataSecret), spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func rawKey(b byte) string {
	k := make([]byte, 32)
	for i := range k {
		k[i] = b
	}
	return base64.StdEncoding.EncodeToString(k)
}

// TestResealer: rows sealed under k1 and rows written before migration 00110 (plain) are
// all under k2 after one pass with OTP_DATA_KEYS="k2:…,k1:…", and read back in plain with
// k2 alone; a second pass finds nothing to do.
func TestResealer(t *testing.T) {
	pool := stores.OpenPostgres(t)
	ctx := context.Background()
	at := time.Date(2030, 3, 4, 5, 0, 0, 0, time.UTC)
	old := postgres.New(pool, dataKeys(t, "k1:"+rawKey(1)))
	if err := old.CreateEndpoint(ctx, events.Endpoint{ID: "0190aaaa-0000-7000-8000-000000000001", AppID: otp.DefaultAppID,
		URL: "http://receiver.test/", SecretSealed: []byte("x"), Types: events.Types(), CreatedAt: at}, history.AdminAction{Action: "webhook_added"}); err != nil {
		t.Fatal(err)
	}
	const phone, legacy = "+819055550001", "+819055550002"
	p := otp.BeginSend{Phone: phone, Channel: "sms", Locale: "en", Now: at, TTL: time.Hour, MaxSends: 3, MaxAttempts: 3,
		NewVerificationID: "0190aaaa-0000-7000-8000-0000000000a1", SendID: "0190aaaa-0000-7000-8000-0000000000b1",
		CodeHash: func(string) []byte { return []byte("h") }}
	if _, err := old.BeginSend(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := old.RecordAdminAction(ctx, history.AdminAction{Action: "limit_reset", Target: "phone:" + phone, Time: at}); err != nil {
		t.Fatal(err)
	}
	// What a server before 00110 wrote: the address in plain.
	for _, q := range []string{
		`INSERT INTO verifications (id, phone, channel, locale, status, max_attempts, created_at, expires_at, app_id)
			VALUES ('0190aaaa-0000-7000-8000-0000000000a2', '` + legacy + `', 'sms', 'en', 'pending', 3, '2030-03-04T05:00:00Z', '2030-03-04T06:00:00Z', '` + otp.DefaultAppID + `')`,
		`INSERT INTO sends (id, verification_id, phone, status, created_at, updated_at, app_id)
			VALUES ('0190aaaa-0000-7000-8000-0000000000b2', '0190aaaa-0000-7000-8000-0000000000a2', '` + legacy + `', 'sent', '2030-03-04T05:00:00Z', '2030-03-04T05:00:00Z', '` + otp.DefaultAppID + `')`,
		`INSERT INTO admin_actions (action, target, created_at) VALUES ('limit_reset', 'phone:` + legacy + `', '2030-03-04T05:00:00Z')`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	rotated := postgres.New(pool, dataKeys(t, "k2:"+rawKey(2)+",k1:"+rawKey(1)))
	r := postgres.NewResealer(rotated, discard(), postgres.ResealerOptions{BatchSize: 1})
	n, err := r.Pass(ctx)
	// k1: the verification, its send, its verification.created event, the audit target;
	// plain: the legacy verification, its send and audit target.
	if err != nil || n != 7 || r.Converted() != 7 {
		t.Fatalf("Pass: got %d (%d), %v; want 7 values converted", n, r.Converted(), err)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM verifications WHERE phone_sealed NOT LIKE 'k2.%' OR phone NOT LIKE 'h1.%' OR phone_prefix <> '+81905555') +
			(SELECT count(*) FROM sends WHERE phone_sealed NOT LIKE 'k2.%' OR phone NOT LIKE 'h1.%' OR phone_prefix <> '+81905555') +
			(SELECT count(*) FROM event_outbox WHERE data->>'to' NOT LIKE 'k2.%') +
			(SELECT count(*) FROM admin_actions WHERE target LIKE 'phone:%' AND target NOT LIKE 'phone:k2.%')`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("got %d rows not under k2 (%v), want none", left, err)
	}
	if n, err := r.Pass(ctx); err != nil || n != 0 {
		t.Errorf("second pass: got %d, %v; want nothing to do", n, err)
	}

	only := postgres.New(pool, dataKeys(t, "k2:"+rawKey(2)))
	for _, a := range []string{phone, legacy} {
		got, err := only.Newest(ctx, otp.DefaultAppID, a)
		if err != nil || got.Address != a {
			t.Errorf("Newest(%s) with k2 alone: got %q, %v", a, got.Address, err)
		}
		rows, _, err := only.ListSends(ctx, history.SendFilter{Phone: a})
		if err != nil || len(rows) != 1 || rows[0].Phone != a {
			t.Errorf("ListSends(%s) with k2 alone: got %+v, %v", a, rows, err)
		}
	}
	acts, err := only.AuditLog(ctx, history.AuditFilter{Action: "limit_reset"})
	if err != nil || len(acts) != 2 || !strings.HasPrefix(acts[0].Target, "phone:+8190555500") || !strings.HasPrefix(acts[1].Target, "phone:+8190555500") {
		t.Errorf("AuditLog with k2 alone: got %+v, %v", acts, err)
	}
	claims, err := only.ClaimEvents(ctx, at.Add(time.Minute), 10, time.Minute)
	if err != nil || len(claims) != 1 || !strings.Contains(string(claims[0].Event.Data), phone) {
		t.Errorf("ClaimEvents with k2 alone: got %+v, %v; want the event naming %s", claims, err, phone)
	}
}
