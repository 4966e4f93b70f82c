package postgres

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/pii"
)

// resealLockID names the advisory lock that lets one instance at a time re-seal.
const resealLockID int64 = 0x6f7470_7273 // "otp" "rs"

// Resealer brings every stored address to the current data key: rows sealed under an older
// key (after OTP_DATA_KEYS put a new key first) are re-sealed, and rows written before
// migration 00110, which hold the plain address, get its index, sealed value and prefix.
// It runs on every instance; a pass holds a Postgres advisory lock, so one instance at a
// time walks the tables, each in primary-key order, in short statements of BatchSize rows,
// each updating only rows unchanged since it read them. Requests are served throughout.
type Resealer struct {
	store *Store
	log   *slog.Logger
	opts  ResealerOptions

	converted atomic.Uint64
}

// ResealerOptions tune a Resealer.
type ResealerOptions struct {
	// Interval is the time between passes; 0 means an hour.
	Interval time.Duration
	// BatchSize is how many rows one statement reads; 0 means 500.
	BatchSize int
}

// NewResealer returns a resealer over store; nothing is done until Run or Pass is called.
func NewResealer(store *Store, log *slog.Logger, opts ResealerOptions) *Resealer {
	if opts.Interval <= 0 {
		opts.Interval = time.Hour
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	return &Resealer{store: store, log: log, opts: opts}
}

// Converted counts the values this resealer re-sealed or converted from plain.
func (r *Resealer) Converted() uint64 { return r.converted.Load() }

// Run makes a pass at once, then every Interval, until ctx ends; a failed pass is retried
// sooner, backing off with jitter up to Interval.
func (r *Resealer) Run(ctx context.Context) error {
	return repeat(ctx, r.opts.Interval, r.log, "re-sealing stored addresses failed", func(ctx context.Context) error {
		_, err := r.Pass(ctx)
		return err
	})
}

// Pass walks every table once, unless another instance is re-sealing, and returns how many
// values it converted. It logs its progress per table and the pass's end, with the key the
// stored addresses are now under: once a pass has ended after every instance runs with a
// new key first, the old key may be removed from OTP_DATA_KEYS.
func (r *Resealer) Pass(ctx context.Context) (int, error) {
	conn, release, locked, err := r.store.tryAdvisoryLock(ctx, resealLockID, "reseal lock")
	if err != nil || !locked {
		return 0, err
	}
	defer release()
	total := 0
	// Verifications first: until a pending one is converted, a check by phone misses it.
	for _, t := range resealTables {
		n, err := r.table(ctx, conn.Conn(), t)
		total += n
		if n > 0 {
			r.log.Info("stored addresses re-sealed", "table", t.name, "values", n, "key", r.store.keys.Current())
		}
		if err != nil {
			return total, wrap("reseal "+t.name, err)
		}
	}
	r.log.Info("stored addresses are all under the current data key", "key", r.store.keys.Current(), "converted", total)
	return total, nil
}

// resealTable is one table's walk: read reads a batch after the cursor (id, the stored
// value, and for address columns the index column), write stores the converted ones.
type resealTable struct {
	name string
	// read returns rows of (id as text, index or "", stored value) after cursor, in id order.
	read string
	// write takes arrays of ids, old values and new (index, sealed, prefix) values.
	write string
	// kind says what the stored value is.
	kind resealKind
}

type resealKind int

const (
	kindAddress resealKind = iota // phone (index or plain) with phone_sealed
	kindEvent                     // event_outbox.data->>'to'
	kindTarget                    // admin_actions.target
)

var resealTables = []resealTable{
	{name: "verifications", kind: kindAddress,
		read: `SELECT id::text, phone, phone_sealed FROM verifications WHERE id > $1::uuid ORDER BY id LIMIT $2`,
		// A plain pending row whose index another pending row of the app holds already (one
		// made after the upgrade) is left for the next pass rather than broken.
		write: `UPDATE verifications t SET phone = u.idx, phone_sealed = u.sealed, phone_prefix = u.prefix
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, old, idx, sealed, prefix)
			WHERE t.id = u.id AND t.phone_sealed = u.old
				AND NOT (t.status = 'pending' AND t.phone <> u.idx AND EXISTS (
					SELECT 1 FROM verifications o WHERE o.app_id = t.app_id AND o.phone = u.idx AND o.status = 'pending'))`},
	{name: "sends", kind: kindAddress,
		read: `SELECT id::text, phone, phone_sealed FROM sends WHERE id > $1::uuid ORDER BY id LIMIT $2`,
		write: `UPDATE sends t SET phone = u.idx, phone_sealed = u.sealed, phone_prefix = u.prefix
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, old, idx, sealed, prefix)
			WHERE t.id = u.id AND t.phone_sealed = u.old`},
	{name: "event_outbox", kind: kindEvent,
		read: `SELECT id::text, '', coalesce(data->>'to', '') FROM event_outbox WHERE id > $1::bigint ORDER BY id LIMIT $2`,
		write: `UPDATE event_outbox t SET data = jsonb_set(t.data, '{to}', to_jsonb(u.sealed))
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, old, idx, sealed, prefix)
			WHERE t.id = u.id AND t.data->>'to' = u.old`},
	{name: "admin_actions", kind: kindTarget,
		read: `SELECT id::text, '', target FROM admin_actions WHERE id > $1::bigint ORDER BY id LIMIT $2`,
		write: `UPDATE admin_actions t SET target = u.sealed
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, old, idx, sealed, prefix)
			WHERE t.id = u.id AND t.target = u.old`},
}

// table walks t from its start and returns how many values it converted.
func (r *Resealer) table(ctx context.Context, conn *pgx.Conn, t resealTable) (int, error) {
	cursor := "00000000-0000-0000-0000-000000000000"
	if t.kind != kindAddress {
		cursor = "0"
	}
	total := 0
	for {
		var ids, olds, idxs, sealeds, prefixes []string
		n := 0
		rows, _ := conn.Query(ctx, t.read, cursor, r.opts.BatchSize)
		for rows.Next() {
			var id, phone, value string
			if err := rows.Scan(&id, &phone, &value); err != nil {
				rows.Close()
				return total, err
			}
			n++
			cursor = id
			idx, sealed, prefix, ok := r.convert(t.kind, phone, value)
			if !ok {
				continue
			}
			ids, olds, idxs, sealeds, prefixes = append(ids, id), append(olds, value), append(idxs, idx), append(sealeds, sealed), append(prefixes, prefix)
		}
		if err := rows.Err(); err != nil {
			return total, err
		}
		if len(ids) > 0 {
			tag, err := conn.Exec(ctx, t.write, ids, olds, idxs, sealeds, prefixes)
			if err != nil {
				return total, err
			}
			total += int(tag.RowsAffected())
			r.converted.Add(uint64(tag.RowsAffected()))
		}
		if n < r.opts.BatchSize {
			return total, nil
		}
	}
}

// convert says what a stored value becomes: ok is false when it is current already.
func (r *Resealer) convert(kind resealKind, phone, value string) (idx, sealed, prefix string, ok bool) {
	keys := r.store.keys
	open := func(v string) (string, bool) {
		if !isSealed(v) {
			return v, v != ""
		}
		if !keys.Stale(v) {
			return "", false
		}
		plain, err := keys.Open(v)
		if err != nil {
			// Sealed under a key no longer configured: nothing can be done here; reads of
			// it fail naming the reason until the key is configured again.
			return "", false
		}
		return plain, true
	}
	switch kind {
	case kindAddress:
		plain, ok := open(value)
		if value == "" {
			plain, ok = phone, phone != "" && !strings.HasPrefix(phone, pii.IndexPrefix)
		}
		if !ok {
			return "", "", "", false
		}
		return keys.Index(plain), keys.Seal(plain), prefixOf(plain), true
	case kindEvent:
		plain, ok := open(value)
		if !ok {
			return "", "", "", false
		}
		return "", keys.Seal(plain), "", true
	default:
		for _, k := range addressTargets {
			if a, found := strings.CutPrefix(value, k); found {
				plain, ok := open(a)
				if !ok {
					return "", "", "", false
				}
				return "", k + keys.Seal(plain), "", true
			}
		}
		return "", "", "", false
	}
}
