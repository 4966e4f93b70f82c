package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

func denied(i int) otp.DeniedSend {
	return otp.DeniedSend{
		ID: uuid.Must(uuid.NewV7()).String(), Phone: fmt.Sprintf("+8190%08d", i%100), ClientIP: "192.0.2.1",
		Status: otp.SendBlocked, Reason: "phone 1/1m", Time: time.Now().UTC(),
	}
}

// count runs a counting query.
func count(t *testing.T, pool *pgxpool.Pool, q string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestBatchWriter(t *testing.T) {
	t.Run("TenThousandDeniedSendsTakeAFewStatements", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		w := stores.StartWriter(t, pool, discard(), postgres.BatchOptions{QueueSize: 10_000, BatchSize: 1_000})
		var wg sync.WaitGroup
		for g := range 10 { // ten request handlers at once
			wg.Go(func() {
				for i := range 1_000 {
					w.RecordDenied(denied(g*1_000 + i))
				}
			})
		}
		wg.Wait()
		if err := w.Flush(t.Context()); err != nil {
			t.Fatalf("Flush: %v", err)
		}
		if w.Written() != 10_000 || w.Dropped() != 0 || w.QueueDepth() != 0 {
			t.Errorf("got written %d dropped %d queued %d, want 10000, 0, 0", w.Written(), w.Dropped(), w.QueueDepth())
		}
		if n := count(t, pool, `SELECT count(*) FROM sends WHERE status = 'blocked'`); n != 10_000 {
			t.Errorf("got %d rows, want 10000", n)
		}
		// Each COPY is one transaction, so the writing statements are the distinct xmins.
		statements := count(t, pool, `SELECT count(DISTINCT xmin::text) FROM sends`)
		if statements > 40 || uint64(statements) != w.Batches() {
			t.Errorf("got %d statements (writer counted %d), want at most 40 and the same count", statements, w.Batches())
		}
		t.Logf("10000 denied sends written in %d statements", statements)
	})

	t.Run("FullQueueDropsAndCounts", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		w := postgres.NewBatchWriter(pool, testenv.DataKeys(), discard(), postgres.BatchOptions{QueueSize: 100})
		for i := range 150 {
			w.RecordDenied(denied(i)) // nothing drains the queue: Run is not running
		}
		if w.Dropped() != 50 || w.QueueDepth() != 100 {
			t.Errorf("got dropped %d queued %d, want 50 and 100", w.Dropped(), w.QueueDepth())
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if n := count(t, pool, `SELECT count(*) FROM sends`); n != 100 || w.Written() != 100 || w.QueueDepth() != 0 {
			t.Errorf("after Close: got %d rows, written %d, queued %d; want 100, 100, 0", n, w.Written(), w.QueueDepth())
		}
	})

	t.Run("CloseWritesWhatIsQueued", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		w := postgres.NewBatchWriter(pool, testenv.DataKeys(), discard(), postgres.BatchOptions{FlushInterval: time.Hour})
		done := make(chan error, 1)
		go func() { done <- w.Run(context.Background()) }()
		for i := range 10 {
			w.RecordDenied(denied(i))
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if n := count(t, pool, `SELECT count(*) FROM sends`); n != 10 {
			t.Errorf("got %d rows, want 10", n)
		}
	})

	t.Run("CanceledRunWritesWhatIsQueued", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		w := postgres.NewBatchWriter(pool, testenv.DataKeys(), discard(), postgres.BatchOptions{FlushInterval: time.Hour})
		for i := range 10 {
			w.RecordDenied(denied(i))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := w.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
		if n := count(t, pool, `SELECT count(*) FROM sends`); n != 10 {
			t.Errorf("got %d rows, want 10", n)
		}
	})

	t.Run("FailedBatchIsDroppedAndLoggedOnce", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		var logs bytes.Buffer
		w := stores.StartWriter(t, pool, slog.New(slog.NewTextHandler(&logs, nil)), postgres.BatchOptions{})
		rows := []otp.DeniedSend{denied(1), denied(2), denied(3), denied(4)}
		// The primary key (id and time: sends is partitioned by time) refuses the whole COPY.
		rows[3].ID, rows[3].Time = rows[0].ID, rows[0].Time
		for _, d := range rows {
			w.RecordDenied(d)
		}
		if err := w.Flush(t.Context()); err != nil {
			t.Fatalf("Flush: %v", err)
		}
		if w.Dropped() != 4 || w.Written() != 0 {
			t.Errorf("got dropped %d written %d, want 4 and 0", w.Dropped(), w.Written())
		}
		if n := strings.Count(logs.String(), "denied sends dropped"); n != 1 {
			t.Errorf("got %d log lines about the failed batch, want 1:\n%s", n, logs.String())
		}
	})
}
