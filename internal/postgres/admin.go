package postgres

import (
	"context"
	"fmt"

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
	_, err := s.pool.Exec(ctx, `INSERT INTO admin_actions (action, target, detail, created_at) VALUES ($1, $2, $3, $4)`,
		a.Action, a.Target, a.Detail, a.Time)
	return wrap("record admin action", err)
}

// AdminActions implements history.Store.
func (s *Store) AdminActions(ctx context.Context, limit int) ([]history.AdminAction, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, action, target, detail, created_at FROM admin_actions
		ORDER BY created_at DESC, id DESC LIMIT $1`, history.AdminActionLimit(limit))
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.AdminAction, error) {
		var a history.AdminAction
		err := r.Scan(&a.ID, &a.Action, &a.Target, &a.Detail, &a.Time)
		a.Time = a.Time.UTC()
		return a, err
	})
	if err != nil {
		return nil, wrap("admin actions", err)
	}
	return out, nil
}
