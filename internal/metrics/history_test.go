package metrics

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
)

func denied(status otp.SendStatus) otp.DeniedSend {
	return otp.DeniedSend{
		ID: uuid.NewString(), Phone: "+819012345678", ClientIP: "192.0.2.1",
		Status: status, Reason: "phone 1/1m", Time: time.Now().UTC(),
	}
}

func TestHistoryMetrics(t *testing.T) {
	t.Run("InMemoryStoreCountsWrittenAndDropped", func(t *testing.T) {
		mem := inmem.New()
		m := New()
		m.History(mem.QueueDepth, mem.Dropped, mem.Written)
		mem.RecordDenied(denied(otp.SendBlocked))
		mem.RecordDenied(denied(otp.SendSent)) // not a refused send: dropped
		for name, want := range map[string]float64{
			"otpgate_history_queue_depth": 0, "otpgate_history_written_total": 1, "otpgate_history_dropped_total": 1,
		} {
			if got := counter(t, m, name); got != want {
				t.Errorf("%s: got %v, want %v", name, got, want)
			}
		}
	})

	t.Run("BatchWriterQueueIsReadAtScrape", func(t *testing.T) {
		ctx := context.Background()
		pool, err := postgres.Open(ctx, testenv.PostgresDSN(t))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(pool.Close)
		if err := postgres.Migrate(ctx, pool); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		w := postgres.NewBatchWriter(pool, testenv.DataKeys(), slog.New(slog.DiscardHandler), postgres.BatchOptions{QueueSize: 1})
		m := New()
		m.History(w.QueueDepth, w.Dropped, w.Written)
		w.RecordDenied(denied(otp.SendBlocked))
		w.RecordDenied(denied(otp.SendDuplicate)) // the queue of one is full: dropped
		if got := counter(t, m, "otpgate_history_queue_depth"); got != 1 {
			t.Errorf("queue depth before close: got %v, want 1", got)
		}
		if got := counter(t, m, "otpgate_history_dropped_total"); got != 1 {
			t.Errorf("dropped: got %v, want 1", got)
		}
		if err := w.Close(ctx); err != nil {
			t.Fatalf("close: %v", err)
		}
		if got := counter(t, m, "otpgate_history_queue_depth"); got != 0 {
			t.Errorf("queue depth after close: got %v, want 0", got)
		}
		if got := counter(t, m, "otpgate_history_written_total"); got != 1 {
			t.Errorf("written after close: got %v, want 1", got)
		}
	})
}
