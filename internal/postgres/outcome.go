package postgres

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/otp"
)

// OutcomeWriter writes how sends ended — sent with the provider and its message id, or
// failed with the error, and every provider attempt — in batches: one statement per batch,
// which also writes verification.sent for the apps that subscribed to it, at the latest
// FlushInterval (100ms by default) after the provider answered, and whatever is queued at
// Close. The send row was
// written as sending before the SMS went out, so an outcome lost with a crashed server
// leaves that row, which the Sweeper settles as unknown.
//
// A Store with an OutcomeWriter (Store.Outcomes) hands it every FinishSend without Undo.
type OutcomeWriter struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	b    *batcher[otp.FinishSend]

	written atomic.Uint64
	lost    atomic.Uint64
	batches atomic.Uint64
}

// NewOutcomeWriter returns a writer; nothing is written until Run is called.
func NewOutcomeWriter(pool *pgxpool.Pool, log *slog.Logger, opts BatchOptions) *OutcomeWriter {
	w := &OutcomeWriter{pool: pool, log: log}
	w.b = newBatcher("outcome writer", opts.withDefaults(100*time.Millisecond), w.write)
	return w
}

// record queues p and reports whether there was room; it never blocks.
func (w *OutcomeWriter) record(p otp.FinishSend) bool { return w.b.offer(p) }

// Written counts outcomes written to the database.
func (w *OutcomeWriter) Written() uint64 { return w.written.Load() }

// Lost counts outcomes whose batch could not be written; their sends stay sending until
// the Sweeper settles them as unknown.
func (w *OutcomeWriter) Lost() uint64 { return w.lost.Load() }

// Batches counts write statements, successful or not.
func (w *OutcomeWriter) Batches() uint64 { return w.batches.Load() }

// QueueDepth is how many outcomes wait to be written.
func (w *OutcomeWriter) QueueDepth() int { return w.b.depth() }

// Run writes queued outcomes until ctx ends or Close is called, then writes what is still
// queued and returns. It may run only once; after Close it returns at once.
func (w *OutcomeWriter) Run(ctx context.Context) error { return w.b.run(ctx) }

// Flush writes everything queued so far and returns once it is written (or given up on);
// it needs Run to be running.
func (w *OutcomeWriter) Flush(ctx context.Context) error { return w.b.flush(ctx) }

// Close stops Run after it has written what is queued, waiting at most until ctx ends.
// When Run was never started, Close writes the queue itself.
func (w *OutcomeWriter) Close(ctx context.Context) error { return w.b.close(ctx) }

// outcomeRetry is the pause before the one retry of a batch that failed.
const outcomeRetry = 100 * time.Millisecond

// write updates one batch of send rows in one statement, as FinishSend would one by one;
// a row the sweeper already settled as unknown takes the real outcome. The statement looks
// for the rows within the window of their ids' times (sendWindow), and a second one for
// those it missed without it. A failed batch is tried once more, then counted as lost.
func (w *OutcomeWriter) write(ctx context.Context, batch []otp.FinishSend) {
	n := len(batch)
	for try := 0; ; try++ {
		w.batches.Add(1)
		rows, err := w.update(ctx, batch)
		if err == nil {
			w.written.Add(uint64(rows))
			if missing := int64(n) - rows; missing > 0 {
				w.log.Warn("send outcomes without a sending row", "rows", missing)
			}
			return
		}
		if try == 1 || ctx.Err() != nil {
			w.lost.Add(uint64(n))
			w.log.Error("send outcomes lost: batch write failed; the sweeper will settle them as unknown",
				"rows", n, "err", wrap("write send outcomes", err))
			return
		}
		select {
		case <-time.After(outcomeRetry):
		case <-ctx.Done():
		}
	}
}

// outcomeSQL updates the send rows of the outcomes $1…$7 and answers the ids it updated;
// outcomeWindowSQL does so only for rows created from $8 to before $9, and outcomeDatedSQL
// for rows created at the times $8, each row's own.
const (
	outcomeSet = `WITH u AS (
			UPDATE sends s SET status = u.status, provider_message_id = u.provider_id,
				error = u.error, updated_at = u.at, provider = coalesce(nullif(u.provider, ''), s.provider), attempts = u.attempts::jsonb`
	outcomeSQL = outcomeSet + `
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
				AS u(id, status, provider_id, error, at, provider, attempts)
			WHERE s.id = ANY($1::uuid[]) AND s.id = u.id AND s.verification_id IS NOT NULL`
	outcomeWindowSQL = outcomeSQL + ` AND s.created_at >= $8 AND s.created_at < $9`
	// The whole primary key: PostgreSQL plans it as one probe per row however little it
	// knows of the day's partition (a prepared statement is planned without its values).
	outcomeDatedSQL = outcomeSet + `
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::timestamptz[])
				AS u(id, status, provider_id, error, at, provider, attempts, sent_at)
			WHERE s.id = u.id AND s.created_at = u.sent_at AND s.verification_id IS NOT NULL`
	outcomeRest = `
			RETURNING s.id, s.verification_id, s.provider, s.updated_at, s.status
		), r AS (
			SELECT id AS send_id, verification_id, provider, updated_at AS at FROM u WHERE status = 'sent'
		), ` + sentEventsCTE + `
		SELECT coalesce(array_agg(id), '{}') FROM u`
)

// update writes batch and answers how many rows it updated: the rows whose send time it
// knows by their primary key, the others within the window of their ids' times, and what
// those missed without a window. Each statement stands alone: a row is written whole, with
// its event, or not at all.
func (w *OutcomeWriter) update(ctx context.Context, batch []otp.FinishSend) (int64, error) {
	var written int64
	rest := batch
	pass := func(sql string, of []otp.FinishSend, extra ...any) error {
		var found []uuid.UUID
		if err := w.pool.QueryRow(ctx, sql, append(outcomeArgs(of), extra...)...).Scan(&found); err != nil {
			return err
		}
		written += int64(len(found))
		rest = slices.DeleteFunc(slices.Clone(rest), func(p otp.FinishSend) bool {
			return slices.Contains(found, uuid.MustParse(p.SendID))
		})
		return nil
	}
	if dated := slices.DeleteFunc(slices.Clone(rest), func(p otp.FinishSend) bool { return p.SendAt.IsZero() }); len(dated) > 0 {
		at := make([]time.Time, len(dated))
		for i, p := range dated {
			at[i] = p.SendAt
		}
		if err := pass(outcomeDatedSQL+outcomeRest, dated, at); err != nil {
			return written, err
		}
	}
	if len(rest) == 0 {
		return written, nil
	}
	ids := make([]string, len(rest))
	for i, p := range rest {
		ids[i] = p.SendID
	}
	if from, to, ok := sendWindow(ids...); ok {
		if err := pass(outcomeWindowSQL+outcomeRest, rest, from, to); err != nil {
			return written, err
		}
	}
	if len(rest) == 0 {
		return written, nil
	}
	err := pass(outcomeSQL+outcomeRest, rest)
	return written, err
}

// outcomeArgs are the arrays $1…$7 of outcomeSQL for batch.
func outcomeArgs(batch []otp.FinishSend) []any {
	n := len(batch)
	ids, statuses, providerIDs, errs, times := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]time.Time, n)
	providers, attempts := make([]string, n), make([]string, n)
	for i, p := range batch {
		ids[i], statuses[i], providerIDs[i], errs[i], times[i] = p.SendID, string(p.Status), p.ProviderID, p.Error, p.Now
		providers[i], attempts[i] = p.Provider, string(attemptsJSON(p.Attempts))
	}
	return []any{ids, statuses, providerIDs, errs, times, providers, attempts}
}
