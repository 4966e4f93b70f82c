package postgres

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/otp"
	"otpgate/internal/pii"
)

// BatchWriter implements otp.DeniedRecorder: refused sends go into a bounded queue
// that Run writes to the sends table in batches, one COPY per batch, so a flood of
// refused requests costs a few statements instead of one insert each.
type BatchWriter struct {
	pool *pgxpool.Pool
	keys *pii.Keys
	log  *slog.Logger
	b    *batcher[otp.DeniedSend]

	dropped atomic.Uint64
	written atomic.Uint64
	batches atomic.Uint64
}

var _ otp.DeniedRecorder = (*BatchWriter)(nil)

// NewBatchWriter returns a writer that stores addresses as the Store over keys does;
// nothing is written until Run is called. Its FlushInterval defaults to 200ms.
func NewBatchWriter(pool *pgxpool.Pool, keys *pii.Keys, log *slog.Logger, opts BatchOptions) *BatchWriter {
	w := &BatchWriter{pool: pool, keys: keys, log: log}
	w.b = newBatcher("batch writer", opts.withDefaults(200*time.Millisecond), w.write)
	return w
}

// RecordDenied queues d without ever blocking; when the queue is full d is dropped
// and counted, as is a row whose status is neither blocked nor duplicate.
func (w *BatchWriter) RecordDenied(d otp.DeniedSend) {
	if d.Status != otp.SendBlocked && d.Status != otp.SendDuplicate {
		w.dropped.Add(1)
		return
	}
	if d.Time.IsZero() {
		d.Time = time.Now().UTC()
	}
	if !w.b.offer(d) {
		w.dropped.Add(1)
	}
}

// Dropped counts refused sends that were never written: queue full or write failed.
func (w *BatchWriter) Dropped() uint64 { return w.dropped.Load() }

// Written counts refused sends written to the database.
func (w *BatchWriter) Written() uint64 { return w.written.Load() }

// Batches counts write statements, successful or not.
func (w *BatchWriter) Batches() uint64 { return w.batches.Load() }

// QueueDepth is how many refused sends wait to be written.
func (w *BatchWriter) QueueDepth() int { return w.b.depth() }

// Run writes queued rows until ctx ends or Close is called, then writes what is
// still queued and returns. It may run only once; after Close it returns at once.
func (w *BatchWriter) Run(ctx context.Context) error { return w.b.run(ctx) }

// Flush writes everything queued so far and returns once it is written (or
// dropped); it needs Run to be running.
func (w *BatchWriter) Flush(ctx context.Context) error { return w.b.flush(ctx) }

// Close stops Run after it has written what is queued, waiting at most until ctx
// ends. When Run was never started, Close writes the queue itself.
func (w *BatchWriter) Close(ctx context.Context) error { return w.b.close(ctx) }

// write copies one batch into sends and writes send.blocked for its blocked rows, in one
// transaction. A failed batch is dropped whole and logged once.
func (w *BatchWriter) write(ctx context.Context, batch []otp.DeniedSend) {
	w.batches.Add(1)
	// pgtype.UUID goes out in binary; google/uuid would go through its driver.Valuer,
	// as text, at a few per cent of the denied path's CPU.
	ids := make([]pgtype.UUID, len(batch))
	for i, d := range batch {
		ids[i] = deniedID(d.ID)
	}
	var n int64
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		var err error
		n, err = tx.CopyFrom(ctx, pgx.Identifier{"sends"},
			[]string{"id", "phone", "phone_sealed", "phone_prefix", "client_ip", "status", "reason", "created_at", "updated_at",
				"app_id", "shadow", "channel", "fraud"},
			pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) {
				d := batch[i]
				return []any{ids[i], w.keys.Index(d.Phone), w.keys.Seal(d.Phone), prefixOf(d.Phone), d.ClientIP, string(d.Status),
					d.Reason, d.Time, d.Time, deniedApp(d.AppID), d.Shadow, deniedChannel(d.Channel), fraudJSON(d.Fraud)}, nil
			}))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, blockedEvents, ids)
		return err
	})
	if err != nil {
		w.dropped.Add(uint64(len(batch)))
		w.log.Error("denied sends dropped: batch write failed", "rows", len(batch), "err", wrap("write denied sends", err))
		return
	}
	w.written.Add(uint64(n))
}

// deniedApp is the row's app: its own when it is a uuid, else the default app.
func deniedApp(id string) pgtype.UUID {
	if u, err := uuid.Parse(id); err == nil {
		return pgtype.UUID{Bytes: u, Valid: true}
	}
	return pgtype.UUID{Bytes: uuid.MustParse(otp.DefaultAppID), Valid: true}
}

// deniedID is the row id for a refused send: its own when it is a uuid, else a fresh one.
func deniedID(id string) pgtype.UUID {
	u, err := uuid.Parse(id)
	if err != nil {
		u = uuid.Must(uuid.NewV7())
	}
	return pgtype.UUID{Bytes: u, Valid: true}
}

// deniedChannel is the channel a refused send is stored with: sms when none is named.
func deniedChannel(ch string) string {
	if ch == "" {
		return otp.ChannelSMS
	}
	return ch
}

// blockedEvents writes send.blocked for the blocked sends among $1 whose app has a
// subscribed endpoint; with none subscribed anywhere it reads nothing but that.
const blockedEvents = `INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
	SELECT otpgate_event_id('send.blocked', s.id), w.id, 'send.blocked', NULL,
		jsonb_build_object('send_id', s.id, 'app_id', s.app_id, 'channel', s.channel, 'to', s.phone_sealed, 'reason', s.reason)
			|| CASE WHEN s.fraud IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('fraud', s.fraud) END,
		s.created_at, s.created_at
	FROM sends s JOIN webhook_endpoints w ON w.app_id = s.app_id AND 'send.blocked' = ANY(w.event_types)
	WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE 'send.blocked' = ANY(event_types))
		AND s.id = ANY($1::uuid[]) AND s.status = 'blocked'
	ORDER BY s.created_at, s.id
	ON CONFLICT DO NOTHING`
