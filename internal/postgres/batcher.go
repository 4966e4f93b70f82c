package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// BatchOptions size a batch writer (BatchWriter, OutcomeWriter); zero fields take the
// writer's defaults.
type BatchOptions struct {
	// QueueSize bounds how many rows wait for a write (default 10,000).
	QueueSize int
	// BatchSize is the most rows one statement writes (default 1,000).
	BatchSize int
	// FlushInterval is the longest a queued row waits (BatchWriter: 200ms, OutcomeWriter: 100ms).
	FlushInterval time.Duration
	// WriteTimeout bounds one batch write, also the last one at shutdown (default 5s).
	WriteTimeout time.Duration
}

// withDefaults fills the zero fields; interval is the writer's own FlushInterval default.
func (o BatchOptions) withDefaults(interval time.Duration) BatchOptions {
	if o.QueueSize <= 0 {
		o.QueueSize = 10_000
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 1_000
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = interval
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 5 * time.Second
	}
	return o
}

// batcher is the loop the batch writers share: rows go into a bounded queue that run takes
// from one goroutine and hands to write in batches — when a batch is full, every
// FlushInterval, on flush, and what is left at the end.
type batcher[T any] struct {
	name  string // for errors, such as "batch writer"
	opts  BatchOptions
	write func(ctx context.Context, batch []T)

	queue   chan T
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{}

	stopOnce sync.Once
	started  atomic.Bool
}

func newBatcher[T any](name string, opts BatchOptions, write func(ctx context.Context, batch []T)) *batcher[T] {
	return &batcher[T]{
		name: name, opts: opts, write: write,
		queue:   make(chan T, opts.QueueSize),
		flushes: make(chan chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// offer queues row without blocking and reports whether there was room.
func (b *batcher[T]) offer(row T) bool {
	select {
	case b.queue <- row:
		return true
	default:
		return false
	}
}

// depth is how many rows wait.
func (b *batcher[T]) depth() int { return len(b.queue) }

// run writes queued rows until ctx ends or close is called, then writes what is still
// queued and returns. It may run only once; after close it returns at once.
func (b *batcher[T]) run(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		select {
		case <-b.stop: // closed before it ran: close wrote the queue
			return nil
		default:
			return fmt.Errorf("postgres: %s: already running", b.name)
		}
	}
	defer close(b.done)
	stopped := ctx.Done()
	// Writes outlive ctx, bounded by WriteTimeout, so that rows taken from the
	// queue are written even when ctx ends in the middle of a batch.
	ctx = context.WithoutCancel(ctx)
	tick := time.NewTicker(b.opts.FlushInterval)
	defer tick.Stop()
	batch := make([]T, 0, b.opts.BatchSize)
	for {
		select {
		case row := <-b.queue:
			batch = b.add(ctx, batch, row)
		case <-tick.C:
			b.writeBatch(ctx, batch)
			batch = batch[:0]
		case reply := <-b.flushes:
			batch = b.drain(ctx, batch)
			close(reply)
		case <-b.stop:
			b.drain(ctx, batch)
			return nil
		case <-stopped:
			b.drain(ctx, batch)
			return nil
		}
	}
}

// flush writes everything queued so far and returns once it is written (or given up
// on); it needs run to be running.
func (b *batcher[T]) flush(ctx context.Context) error {
	reply := make(chan struct{})
	select {
	case b.flushes <- reply:
	case <-b.done:
		return fmt.Errorf("postgres: %s: flush: not running", b.name)
	case <-ctx.Done():
		return fmt.Errorf("postgres: %s: flush: %w", b.name, ctx.Err())
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("postgres: %s: flush: %w", b.name, ctx.Err())
	}
}

// close stops run after it has written what is queued, waiting at most until ctx ends.
// When run was never started, close writes the queue itself.
func (b *batcher[T]) close(ctx context.Context) error {
	b.stopOnce.Do(func() { close(b.stop) })
	if b.started.CompareAndSwap(false, true) {
		defer close(b.done)
		b.drain(ctx, make([]T, 0, b.opts.BatchSize))
		return nil
	}
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("postgres: %s: close: %w", b.name, ctx.Err())
	}
}

// drain writes batch and everything now queued, batch by batch, and returns the emptied batch.
func (b *batcher[T]) drain(ctx context.Context, batch []T) []T {
	for {
		select {
		case row := <-b.queue:
			batch = b.add(ctx, batch, row)
		default:
			b.writeBatch(ctx, batch)
			return batch[:0]
		}
	}
}

// add appends row to batch and writes the batch once it is full; it returns the batch to
// append to next.
func (b *batcher[T]) add(ctx context.Context, batch []T, row T) []T {
	if batch = append(batch, row); len(batch) < b.opts.BatchSize {
		return batch
	}
	b.writeBatch(ctx, batch)
	return batch[:0]
}

// writeBatch hands a non-empty batch to write, bounded by WriteTimeout.
func (b *batcher[T]) writeBatch(ctx context.Context, batch []T) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.WriteTimeout)
	defer cancel()
	b.write(ctx, batch)
}
