package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/history"
	"otpgate/internal/settings"
)

var _ settings.Store = (*Store)(nil)

// writeSetting is the one statement that changes a live setting: it stores the document
// $2 under the name $1 (NULL keeps the stored one: a change of rows the version stands
// for, such as fraud's lists or the apps) and moves the version on, creating the row of a
// name written for the first time. It returns the new version.
const writeSetting = `INSERT INTO settings (name, value, version, updated_at) VALUES ($1, $2::jsonb, 1, $3)
	ON CONFLICT (name) DO UPDATE SET value = coalesce(excluded.value, settings.value),
		version = settings.version + 1, updated_at = excluded.updated_at
	RETURNING version`

// Setting implements settings.Store.
func (s *Store) Setting(ctx context.Context, name string) ([]byte, int64, error) {
	doc, v, err := settingIn(ctx, s.pool, name)
	return doc, v, wrap("setting "+name, err)
}

// settingIn reads a setting with q, a pool or a transaction; no row is no document at 0.
func settingIn(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, name string) ([]byte, int64, error) {
	var (
		doc []byte
		v   int64
	)
	err := q.QueryRow(ctx, `SELECT value, version FROM settings WHERE name = $1`, name).Scan(&doc, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil
	}
	return doc, v, err
}

// SettingVersion implements settings.Store.
func (s *Store) SettingVersion(ctx context.Context, name string) (int64, error) {
	_, v, err := settingIn(ctx, s.pool, name)
	return v, wrap("setting version "+name, err)
}

// SeedSetting implements settings.Store.
func (s *Store) SeedSetting(ctx context.Context, name string, doc []byte) (bool, error) {
	if err := settings.CheckDocument(doc); err != nil {
		return false, fmt.Errorf("postgres: seed setting %s: %w", name, err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO settings (name, value, updated_at) VALUES ($1, $2::jsonb, $3)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
		WHERE settings.value IS NULL`, name, string(doc), s.Now())
	if err != nil {
		return false, wrap("seed setting "+name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// UpdateSetting implements settings.Store.
func (s *Store) UpdateSetting(ctx context.Context, name string, update func([]byte) ([]byte, history.AdminAction, error)) (int64, error) {
	var version int64
	var refused error
	err := s.inTx(ctx, "update setting "+name, func(tx pgx.Tx) error {
		// Locks the row, creating that of a name not written before, so that two first
		// changes at once each see the other's.
		var stored []byte
		if err := tx.QueryRow(ctx, `INSERT INTO settings (name) VALUES ($1)
			ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING value`, name).Scan(&stored); err != nil {
			return err
		}
		next, a, err := update(stored)
		if err == nil {
			err = settings.CheckDocument(next)
		}
		if err != nil {
			refused = err
			return err
		}
		if err := tx.QueryRow(ctx, writeSetting, name, string(next), s.Now()).Scan(&version); err != nil {
			return err
		}
		return s.auditTx(ctx, tx, a)
	})
	if refused != nil {
		return 0, refused
	}
	return version, err
}

// bumpSettingTx moves name's version on in tx after a change of the rows it stands for.
func (s *Store) bumpSettingTx(ctx context.Context, tx pgx.Tx, name string) error {
	_, err := tx.Exec(ctx, writeSetting, name, nil, s.Now())
	return err
}
