// Package migrations holds the SQL schema of otpgate and applies it with goose.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed *.sql
var files embed.FS

// lockID names the advisory lock that serialises instances migrating one database;
// it is our own so that other goose users of the same database do not wait for us.
const lockID int64 = 0x6f7470676174 // "otpgat"

// Up applies every pending migration. It holds a Postgres session advisory lock
// meanwhile, so several instances starting together apply each migration once.
// db must be a Postgres database (for pgx: github.com/jackc/pgx/v5/stdlib).
func Up(ctx context.Context, db *sql.DB) error {
	p, err := provider(db)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrations: up: %w", err)
	}
	return nil
}

// Status reports, per migration, its file and whether it is applied.
func Status(ctx context.Context, db *sql.DB) ([]*goose.MigrationStatus, error) {
	p, err := provider(db)
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: status: %w", err)
	}
	return st, nil
}

func provider(db *sql.DB) (*goose.Provider, error) {
	// Waiters poll the lock every second for up to five minutes; ctx can end it sooner.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, fmt.Errorf("migrations: locker: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return nil, fmt.Errorf("migrations: provider: %w", err)
	}
	return p, nil
}
