package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

var _ fraud.Store = (*Store)(nil)

// FraudState implements fraud.Store.
func (s *Store) FraudState(ctx context.Context) (fraud.State, error) {
	var st fraud.State
	err := s.inTx(ctx, "fraud state", func(tx pgx.Tx) error {
		doc, v, err := settingIn(ctx, tx, fraud.SettingName)
		if err != nil {
			return err
		}
		if st.Values, err = fraud.DecodeValues(doc); err != nil {
			return err
		}
		st.Version = v
		rows, _ := tx.Query(ctx, `SELECT id, list, kind, value, note, created_at FROM fraud_list_entries ORDER BY id`)
		st.Entries, err = pgx.CollectRows(rows, scanListEntry)
		return err
	})
	return st, err
}

func scanListEntry(r pgx.CollectableRow) (fraud.ListEntry, error) {
	var e fraud.ListEntry
	var list, kind string
	err := r.Scan(&e.ID, &list, &kind, &e.Value, &e.Note, &e.CreatedAt)
	e.List, e.Kind, e.CreatedAt = fraud.List(list), fraud.Kind(kind), e.CreatedAt.UTC()
	return e, err
}

// auditTx writes an admin action in tx; a zero Time means now.
func (s *Store) auditTx(ctx context.Context, tx pgx.Tx, a history.AdminAction) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if a.Time.IsZero() {
		a.Time = s.Now()
	}
	_, err := tx.Exec(ctx, insertAdminAction, s.auditArgs(a.Stamp(ctx))...)
	return err
}

// errDuplicateEntry is the refusal of an entry that its list has already.
func errDuplicateEntry(list fraud.List) error {
	return &otp.ErrInvalidRequest{Fields: map[string]string{"value": "already on the " + string(list) + " list"}}
}

// AddFraudListEntry implements fraud.Store.
func (s *Store) AddFraudListEntry(ctx context.Context, e fraud.ListEntry, a history.AdminAction) (fraud.ListEntry, error) {
	if err := errors.Join(otp.CheckTextIn("entry", e), a.Validate()); err != nil {
		return fraud.ListEntry{}, fmt.Errorf("postgres: add fraud list entry: %w", err)
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.Now()
	}
	dup := false
	err := s.inTx(ctx, "add fraud list entry", func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO fraud_list_entries (list, kind, value, note, created_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT ON CONSTRAINT fraud_list_entries_value_key DO NOTHING
			RETURNING id, created_at`, string(e.List), string(e.Kind), e.Value, e.Note, e.CreatedAt).Scan(&e.ID, &e.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			dup = true
			return err
		}
		if err != nil {
			return err
		}
		if err := s.bumpSettingTx(ctx, tx, fraud.SettingName); err != nil {
			return err
		}
		return s.auditTx(ctx, tx, fraud.AuditListAdd(a, e))
	})
	if dup {
		return fraud.ListEntry{}, errDuplicateEntry(e.List)
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err
}

// DeleteFraudListEntry implements fraud.Store.
func (s *Store) DeleteFraudListEntry(ctx context.Context, id int64, a history.AdminAction) (fraud.ListEntry, error) {
	var e fraud.ListEntry
	err := s.inTx(ctx, "delete fraud list entry", func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `DELETE FROM fraud_list_entries WHERE id = $1 RETURNING id, list, kind, value, note, created_at`, id)
		var err error
		e, err = pgx.CollectExactlyOneRow(rows, scanListEntry)
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := s.bumpSettingTx(ctx, tx, fraud.SettingName); err != nil {
			return err
		}
		a = fraud.AuditListRemove(a, e)
		return s.auditTx(ctx, tx, a)
	})
	return e, err
}

// blockCols are read by scanBlock, in this order.
const blockCols = `id, scope, target, mode, reason, started_at, ends_at, lifted_at, lifted_by, why`

func scanBlock(r pgx.CollectableRow) (fraud.Block, error) {
	var (
		b      fraud.Block
		mode   string
		lifted *time.Time
		why    []byte
	)
	err := r.Scan(&b.ID, &b.Scope, &b.Target, &mode, &b.Reason, &b.StartedAt, &b.EndsAt, &lifted, &b.LiftedBy, &why)
	if err == nil {
		b.Why, err = parseFraud(why)
	}
	b.Mode, b.StartedAt, b.EndsAt = fraud.Mode(mode), b.StartedAt.UTC(), b.EndsAt.UTC()
	if lifted != nil {
		b.LiftedAt = lifted.UTC()
	}
	return b, err
}

// RecordFraudBlock implements fraud.Store.
func (s *Store) RecordFraudBlock(ctx context.Context, b fraud.Block, a history.AdminAction) error {
	if !validID(b.ID) {
		return fmt.Errorf("postgres: record fraud block: %w: id must be a uuid", errBug)
	}
	if err := errors.Join(otp.CheckTextIn("block", b), a.Validate()); err != nil {
		return fmt.Errorf("postgres: record fraud block: %w", err)
	}
	return s.inTx(ctx, "record fraud block", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO fraud_blocks (id, scope, target, mode, reason, started_at, ends_at, why)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, b.ID, b.Scope, b.Target, string(b.Mode), b.Reason, b.StartedAt, b.EndsAt,
			fraudJSON(b.Why)); err != nil {
			return err
		}
		if err := emitBlockTx(ctx, tx, events.FraudBlockStarted, b.ID, nil, b.StartedAt); err != nil {
			return err
		}
		return s.auditTx(ctx, tx, a)
	})
}

// FraudBlocks implements fraud.Store.
func (s *Store) FraudBlocks(ctx context.Context, f fraud.BlockFilter) ([]fraud.Block, error) {
	var limit *int
	if f.Limit > 0 {
		n := history.AdminActionLimit(f.Limit)
		limit = &n
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+blockCols+` FROM fraud_blocks
		WHERE $1 OR (lifted_at IS NULL AND ends_at > $2)
		ORDER BY started_at DESC, id DESC LIMIT $3`, f.All, f.Now, limit)
	out, err := pgx.CollectRows(rows, scanBlock)
	if err != nil {
		return nil, wrap("fraud blocks", err)
	}
	return out, nil
}

// LiftFraudBlock implements fraud.Store.
func (s *Store) LiftFraudBlock(ctx context.Context, id string, at time.Time, by string, a history.AdminAction) (fraud.Block, error) {
	if !validID(id) {
		return fraud.Block{}, fmt.Errorf("postgres: lift fraud block: %w", otp.ErrNotFound)
	}
	var b fraud.Block
	err := s.inTx(ctx, "lift fraud block", func(tx pgx.Tx) error {
		var reported *time.Time
		err := tx.QueryRow(ctx, `SELECT end_reported_at FROM fraud_blocks WHERE id = $1 FOR UPDATE`, id).Scan(&reported)
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `UPDATE fraud_blocks SET
				lifted_by = CASE WHEN lifted_at IS NULL THEN $3 ELSE lifted_by END,
				lifted_at = coalesce(lifted_at, $2),
				end_reported_at = coalesce(end_reported_at, $2)
			WHERE id = $1 RETURNING `+blockCols, id, at, by)
		b, err = pgx.CollectExactlyOneRow(rows, scanBlock)
		if err != nil {
			return err
		}
		if reported == nil {
			// Its end was not reported yet: lifted now, or ran out and not yet found by the
			// expiry job, which this report spares.
			end := b.LiftedAt
			if b.EndsAt.Before(end) {
				end = b.EndsAt
			}
			ended := map[string]string{"ended_at": events.Time(end), "lifted_by": b.LiftedBy}
			if err := emitBlockTx(ctx, tx, events.FraudBlockEnded, b.ID, ended, at); err != nil {
				return err
			}
		}
		a = fraud.AuditLift(a, b, at)
		if a.Time.IsZero() {
			a.Time = at
		}
		return s.auditTx(ctx, tx, a)
	})
	return b, err
}

// ChallengedSends implements fraud.Store.
func (s *Store) ChallengedSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	now := s.Now()
	rows, _ := s.pool.Query(ctx, `SELECT `+sendCols+sendFrom+`
		WHERE s.fraud IS NOT NULL AND s.fraud->>'action' IN ('challenged', 'passed')
		ORDER BY s.created_at DESC, s.id DESC LIMIT $1`, history.AdminActionLimit(limit))
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.SendRow, error) { return s.scanSend(r, now) })
	if err != nil {
		return nil, wrap("challenged sends", err)
	}
	return out, nil
}

// ShadowSends implements fraud.Store.
func (s *Store) ShadowSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	now := s.Now()
	rows, _ := s.pool.Query(ctx, `SELECT `+sendCols+sendFrom+` WHERE s.shadow <> ''
		ORDER BY s.created_at DESC, s.id DESC LIMIT $1`, history.AdminActionLimit(limit))
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.SendRow, error) { return s.scanSend(r, now) })
	if err != nil {
		return nil, wrap("shadow sends", err)
	}
	return out, nil
}
