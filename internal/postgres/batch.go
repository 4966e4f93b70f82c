package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/otp"
)

// BatchOptions size a BatchWriter; zero fields take the defaults.
type BatchOptions struct {
	// QueueSize bounds how many refused sends wait for a write (default 10,000).
	QueueSize int
	// BatchSize is the most rows one COPY writes (default 1,000).
	BatchSize int
	// FlushInterval is the longest a queued row waits (default 200ms).
	FlushInterval time.Duration
	// WriteTimeout bounds one batch write, also the last one at shutdown (default 5s).
	WriteTimeout time.Duration
}

// BatchWriter implements otp.DeniedRecorder: refused sends go into a bounded queue
// that Run writes to the sends table in batches, one COPY per batch, so a flood of
// refused requests costs a few statements instead of one insert each.
type BatchWriter struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	opts BatchOptions

	queue   chan otp.DeniedSend
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{}

	stopOnce sync.Once
	started  atomic.Bool
	dropped  atomic.Uint64
	written  atomic.Uint64
	batches  atomic.Uint64
}

var _ otp.DeniedRecorder = (*BatchWriter)(nil)

// NewBatchWriter returns a writer; nothing is written until Run is called.
func NewBatchWriter(pool *pgxpool.Pool, log *slog.Logger, opts BatchOptions) *BatchWriter {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 10_000
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1_000
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 200 * time.Millisecond
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 5 * time.Second
	}
	return &BatchWriter{
		pool: pool, log: log, opts: opts,
		queue:   make(chan otp.DeniedSend, opts.QueueSize),
		flushes: make(chan chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
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
	select {
	case w.queue <- d:
	default:
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
func (w *BatchWriter) QueueDepth() int { return len(w.queue) }

// Run writes queued rows until ctx ends or Close is called, then writes what is
// still queued and returns. It may run only once; after Close it returns at once.
func (w *BatchWriter) Run(ctx context.Context) error {
	if !w.started.CompareAndSwap(false, true) {
		select {
		case <-w.stop: // closed before it ran: Close wrote the queue
			return nil
		default:
			return errors.New("postgres: batch writer: already running")
		}
	}
	defer close(w.done)
	stopped := ctx.Done()
	// Writes outlive ctx, bounded by WriteTimeout, so that rows taken from the
	// queue are written even when ctx ends in the middle of a batch.
	ctx = context.WithoutCancel(ctx)
	tick := time.NewTicker(w.opts.FlushInterval)
	defer tick.Stop()
	batch := make([]otp.DeniedSend, 0, w.opts.BatchSize)
	for {
		select {
		case d := <-w.queue:
			batch = w.add(ctx, batch, d)
		case <-tick.C:
			w.write(ctx, batch)
			batch = batch[:0]
		case reply := <-w.flushes:
			batch = w.drain(ctx, batch)
			close(reply)
		case <-w.stop:
			w.drain(ctx, batch)
			return nil
		case <-stopped:
			w.drain(ctx, batch)
			return nil
		}
	}
}

// Flush writes everything queued so far and returns once it is written (or
// dropped); it needs Run to be running.
func (w *BatchWriter) Flush(ctx context.Context) error {
	reply := make(chan struct{})
	select {
	case w.flushes <- reply:
	case <-w.done:
		return errors.New("postgres: batch writer: flush: not running")
	case <-ctx.Done():
		return fmt.Errorf("postgres: batch writer: flush: %w", ctx.Err())
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("postgres: batch writer: flush: %w", ctx.Err())
	}
}

// Close stops Run after it has written what is queued, waiting at most until ctx
// ends. When Run was never started, Close writes the queue itself.
func (w *BatchWriter) Close(ctx context.Context) error {
	w.stopOnce.Do(func() { close(w.stop) })
	if w.started.CompareAndSwap(false, true) {
		defer close(w.done)
		w.drain(ctx, make([]otp.DeniedSend, 0, w.opts.BatchSize))
		return nil
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("postgres: batch writer: close: %w", ctx.Err())
	}
}

// drain writes batch and everything now queued, batch by batch, and returns the emptied batch.
func (w *BatchWriter) drain(ctx context.Context, batch []otp.DeniedSend) []otp.DeniedSend {
	for {
		select {
		case d := <-w.queue:
			batch = w.add(ctx, batch, d)
		default:
			w.write(ctx, batch)
			return batch[:0]
		}
	}
}

// add appends d to batch and writes the batch once it is full; it returns the batch to
// append to next.
func (w *BatchWriter) add(ctx context.Context, batch []otp.DeniedSend, d otp.DeniedSend) []otp.DeniedSend {
	if batch = append(batch, d); len(batch) < w.opts.BatchSize {
		return batch
	}
	w.write(ctx, batch)
	return batch[:0]
}

// write copies one batch into sends. A failed batch is dropped whole and logged once.
func (w *BatchWriter) write(ctx context.Context, batch []otp.DeniedSend) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, w.opts.WriteTimeout)
	defer cancel()
	w.batches.Add(1)
	n, err := w.pool.CopyFrom(ctx, pgx.Identifier{"sends"},
		[]string{"id", "phone", "client_ip", "status", "reason", "created_at", "updated_at", "shadow"},
		pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) {
			d := batch[i]
			return []any{deniedID(d.ID), d.Phone, d.ClientIP, string(d.Status), d.Reason, d.Time, d.Time, d.Shadow}, nil
		}))
	if err != nil {
		w.dropped.Add(uint64(len(batch)))
		w.log.Error("denied sends dropped: batch write failed", "rows", len(batch), "err", wrap("write denied sends", err))
		return
	}
	w.written.Add(uint64(n))
}

// deniedID is the row id for a refused send: its own when it is a uuid, else a fresh one.
func deniedID(id string) uuid.UUID {
	if u, err := uuid.Parse(id); err == nil {
		return u
	}
	return uuid.Must(uuid.NewV7())
}
