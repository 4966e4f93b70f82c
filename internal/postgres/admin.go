package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/history"
)

// RecordAdminAction implements history.Store.
func (s *Store) RecordAdminAction(ctx context.Context, a history.AdminAction) error {
	if err := a.Validate(); err != nil {
		return fmt.Errorf("postgres: record admin action: %w", err)
	}
	if a.Time.IsZero() {
		a.Time = s.Now()
	}
	a = a.Stamp(ctx)
	_, err := s.pool.Exec(ctx, insertAdminAction, s.auditArgs(a)...)
	return wrap("record admin action", err)
}

// insertAdminAction writes one audit entry; auditArgs gives its arguments.
const insertAdminAction = `INSERT INTO admin_actions (action, target, detail, created_at, actor_kind, actor, actor_id, token_id, client_ip, before, after)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`

// auditArgs seals an address the target names (sealTarget).
func (s *Store) auditArgs(a history.AdminAction) []any {
	return []any{a.Action, s.sealTarget(a.Target), a.Detail, a.Time, a.ActorKind, a.Actor, a.ActorID, a.TokenID, a.ClientIP, a.Before, a.After}
}

// auditCols are read by scanAudit, in this order.
const auditCols = `id, action, target, detail, created_at, actor_kind, actor, actor_id, token_id, client_ip, before, after`

// scanAudit reads a row of auditCols and opens an address its target names.
func (s *Store) scanAudit(r pgx.CollectableRow) (history.AdminAction, error) {
	var a history.AdminAction
	err := r.Scan(&a.ID, &a.Action, &a.Target, &a.Detail, &a.Time, &a.ActorKind, &a.Actor, &a.ActorID, &a.TokenID, &a.ClientIP, &a.Before, &a.After)
	a.Time = a.Time.UTC()
	if err == nil {
		a.Target, err = s.openTarget(a.Target)
	}
	return a, err
}

// AuditLog implements history.Store; the actor and action filters each have an index.
func (s *Store) AuditLog(ctx context.Context, f history.AuditFilter) ([]history.AdminAction, error) {
	var from, to *time.Time
	if !f.From.IsZero() {
		from = &f.From
	}
	if !f.To.IsZero() {
		to = &f.To
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+auditCols+` FROM admin_actions
		WHERE ($1 = '' OR actor = $1 OR actor_id = $1 OR actor_kind = $1)
		  AND ($2 = '' OR action = $2)
		  AND ($3::timestamptz IS NULL OR created_at >= $3)
		  AND ($4::timestamptz IS NULL OR created_at < $4)
		  AND ($5 = 0 OR id < $5)
		ORDER BY created_at DESC, id DESC LIMIT $6`,
		f.Actor, f.Action, from, to, f.BeforeID, history.AdminActionLimit(f.Limit))
	out, err := pgx.CollectRows(rows, s.scanAudit)
	if err != nil {
		return nil, wrap("audit log", err)
	}
	return out, nil
}

// AdminActions implements history.Store.
func (s *Store) AdminActions(ctx context.Context, limit int) ([]history.AdminAction, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+auditCols+` FROM admin_actions
		ORDER BY created_at DESC, id DESC LIMIT $1`, history.AdminActionLimit(limit))
	out, err := pgx.CollectRows(rows, s.scanAudit)
	if err != nil {
		return nil, wrap("admin actions", err)
	}
	return out, nil
}
