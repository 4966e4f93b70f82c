package postgres_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/message"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/rate"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

// historyRows is how many history rows BenchmarkAllowedSendWithHistory seeds.
var historyRows = flag.Int("history-rows", 10_000_000, "history rows BenchmarkAllowedSendWithHistory seeds (verifications, sends, attempts)")

// historyWindow is the span the seeded history covers: OTP_HISTORY_RETENTION's default.
const historyWindow = 90 * 24 * time.Hour

// seedHistorySQL writes, over historyWindow ending an hour ago, @n verifications, each
// approved after one sent, delivered and priced send, and an approving check for every
// other one: 2.5 history rows per verification, as an SMS service without much abuse keeps
// them. Numbers and client addresses are spread, so that every index is as large as real
// history makes it; ids are UUIDv7 of their row's time, as the service makes them.
var seedHistorySQL = []string{
	`INSERT INTO verifications (id, phone, channel, locale, status, code_hashes, sends, attempts, max_attempts,
			client_ip, created_at, expires_at, closed_at)
		SELECT ` + benchUUID("v") + `, ` + benchPhone + `, 'sms', 'en', 'approved',
			ARRAY[decode(md5('c' || i) || md5('d' || i), 'hex')], 1, 1, 5, ` + benchIP + `,
			t, t + interval '5 minutes', t + interval '1 minute'
		FROM ` + benchSeries,
	`INSERT INTO sends (id, verification_id, phone, client_ip, status, provider, provider_message_id, created_at,
			updated_at, country, attempts, encoding, segments, delivery, delivered_at, cost, currency)
		SELECT ` + benchUUID("s") + `, ` + benchUUID("v") + `, ` + benchPhone + `, ` + benchIP + `, 'sent', 'twilio',
			'SM' || md5('s' || i), t, t + interval '2 seconds', 'JP',
			jsonb_build_array(jsonb_build_object('provider', 'twilio', 'outcome', 'sent', 'provider_id', 'SM' || md5('s' || i),
				'start', t, 'duration_ms', 180)),
			'GSM-7', 1, 'delivered', t + interval '6 seconds', 7500, 'USD'
		FROM ` + benchSeries,
	`INSERT INTO attempts (verification_id, outcome, client_ip, created_at)
		SELECT ` + benchUUID("v") + `, 'approved', ` + benchIP + `, t + interval '40 seconds'
		FROM ` + benchSeries + ` WHERE i % 2 = 0`,
}

const (
	// benchSeries numbers the verifications i from 0 and gives each its time t.
	benchSeries = `(SELECT i, @start::timestamptz + i * @step::float8 * interval '1 microsecond' AS t
		FROM generate_series(0, @n::bigint - 1) AS i) AS g`
	benchPhone = `'+8190' || lpad((i * 7919 % 100000000)::text, 8, '0')`
	benchIP    = `'10.' || (i % 250) || '.' || (i / 250 % 250) || '.' || (i / 62500 % 250)`
)

// benchUUID is the UUIDv7 of time t for row i, the random part from salt and i.
func benchUUID(salt string) string {
	return `(lpad(to_hex((extract(epoch FROM t) * 1000)::bigint), 12, '0') || '7' || substr(md5('` + salt + `' || i), 1, 3)
		|| '8' || substr(md5('` + salt + `' || i), 4, 15))::uuid`
}

// seedHistory makes the day partitions of the window and writes rows history rows into
// them, then vacuums and analyzes them as autovacuum would have.
func seedHistory(b *testing.B, pool *pgxpool.Pool, s *postgres.Store, rows int) {
	ctx := context.Background()
	end := time.Now().UTC().Add(-time.Hour)
	start := end.Add(-historyWindow)
	if _, err := s.PrepareDays(ctx, start, end); err != nil {
		b.Fatalf("PrepareDays: %v", err)
	}
	n := rows * 2 / 5 // 2.5 rows per verification
	step := float64(historyWindow.Microseconds()) / float64(n)
	args := pgx.NamedArgs{"start": start, "step": step, "n": n}
	began := time.Now()
	// The verifications first, which the others refer to; then sends and attempts at once.
	if _, err := pool.Exec(ctx, seedHistorySQL[0], args); err != nil {
		b.Fatalf("seed verifications: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(seedHistorySQL))
	for i, q := range seedHistorySQL[1:] {
		wg.Go(func() { _, errs[i] = pool.Exec(ctx, q, args) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("seed history: %v", err)
	}
	if _, err := pool.Exec(ctx, `VACUUM (ANALYZE) verifications, sends, attempts`); err != nil {
		b.Fatalf("vacuum: %v", err)
	}
	var total int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM verifications) + (SELECT count(*) FROM sends) + (SELECT count(*) FROM attempts)`).Scan(&total); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d history rows in %s", total, time.Since(began).Round(time.Second))
}

// allowAll is a limiter that admits every send: the benchmark measures the store's part of
// the send path, the same for both databases.
type allowAll struct{}

func (allowAll) Allow(context.Context, []rate.Limit) (rate.Decision, error) {
	return rate.Decision{Allowed: true}, nil
}
func (allowAll) Refund(context.Context, rate.Reservation) error { return nil }
func (allowAll) Inspect(context.Context, rate.Limit) ([]rate.RuleState, error) {
	return nil, nil
}
func (allowAll) Reset(context.Context, string, string) error { return nil }

// quickProvider is an SMS provider that accepts every message at once.
type quickProvider struct{}

func (quickProvider) Send(_ context.Context, m otp.Message) (string, error) { return "SM" + m.ID, nil }
func (quickProvider) Name() string                                          { return "bench" }

// sendSide is one database with the send path over it: the otp service on the Postgres
// store, with the outcome and refused-send writers the server runs.
type sendSide struct {
	name  string
	svc   *otp.Service
	sent  atomic.Int64
	phone atomic.Int64
	took  time.Duration
}

func newSendSide(b *testing.B, name string, pool *pgxpool.Pool) *sendSide {
	s := postgres.New(pool, testenv.DataKeys())
	s.Outcomes = stores.StartOutcomes(b, pool, postgres.BatchOptions{})
	denied := stores.StartWriter(b, pool, discard(), postgres.BatchOptions{})
	catalog, err := message.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := otp.Config{
		Secret: []byte("secret of the history benchmark"), CodeLength: 6, CodeTTL: 5 * time.Minute,
		MaxSends: 5, MaxAttempts: 3, DuplicateWindow: 5 * time.Second,
		PhoneRules: []rate.Rule{{Limit: 1, Window: time.Minute}}, IPRules: []rate.Rule{{Limit: 10, Window: time.Hour}},
		SMSTimeout: time.Second, LimiterTimeout: time.Second, StoreTimeout: 5 * time.Second,
	}
	return &sendSide{name: name, svc: otp.NewService(cfg, s, allowAll{}, quickProvider{}, catalog, denied, slog.New(slog.DiscardHandler))}
}

// run sends from conc callers for d, each to a number of its own, and counts the allowed
// sends (a send that is not allowed fails the benchmark).
func (side *sendSide) run(b *testing.B, conc int, d time.Duration, count bool) {
	ctx := context.Background()
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	began := time.Now()
	for range conc {
		wg.Go(func() {
			for time.Now().Before(deadline) && failed.Load() == nil {
				n := side.phone.Add(1)
				_, err := side.svc.Send(ctx, otp.SendInput{Phone: fmt.Sprintf("+81801%07d", n%10_000_000), ClientIP: fmt.Sprintf("192.0.2.%d", n%250)})
				if err != nil {
					failed.Store(&err)
					return
				}
				if count {
					side.sent.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatalf("%s: send: %v", side.name, *err)
	}
	if count {
		side.took += time.Since(began)
	}
}

func (side *sendSide) rate() float64 { return float64(side.sent.Load()) / side.took.Seconds() }

// BenchmarkAllowedSendWithHistory compares the allowed-send throughput of the send path on
// an empty database with that on one holding -history-rows rows of history over 90 days:
// the two take turns, slice after slice, so that whatever else the machine does hits both
// alike. It reports both rates and their ratio (target: at least 0.9).
//
//	go test -run '^$' -bench BenchmarkAllowedSendWithHistory -benchtime 1x -timeout 60m ./internal/postgres/
func BenchmarkAllowedSendWithHistory(b *testing.B) {
	const (
		conc   = 16
		rounds = 6
		slice  = 2 * time.Second
	)
	emptyPool, historyPool := stores.OpenPostgres(b), stores.OpenPostgres(b)
	seedHistory(b, historyPool, postgres.New(historyPool, testenv.DataKeys()), *historyRows)
	sides := []*sendSide{newSendSide(b, "empty", emptyPool), newSendSide(b, "history", historyPool)}
	for b.Loop() {
		for _, side := range sides {
			side.run(b, conc, time.Second, false) // warm-up: connections, plans, caches
		}
		for r := range rounds {
			for i := range sides {
				sides[(r+i)%len(sides)].run(b, conc, slice, true)
			}
		}
	}
	empty, full := sides[0].rate(), sides[1].rate()
	b.ReportMetric(empty, "sends/s-empty")
	b.ReportMetric(full, "sends/s-history")
	b.ReportMetric(full/empty, "ratio")
	b.Logf("allowed sends: %.0f/s on the empty database, %.0f/s with %d history rows: ratio %.3f", empty, full, *historyRows, full/empty)
}
