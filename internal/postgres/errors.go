package postgres

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"otpgate/internal/otp"
)

// wrap gives err the operation's context and marks it otp.ErrUnavailable unless
// it is a domain outcome or an error Postgres itself reported about our statement.
// Everything else — refused or dropped connections, timeouts, a closed pool, a
// server shutting down — means the database could not do its job in time.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if domain(err) || !unavailable(err) {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	return fmt.Errorf("postgres: %s: %w: %w", op, otp.ErrUnavailable, err)
}

func domain(err error) bool {
	var budget *otp.ErrSendBudget
	var invalid *otp.ErrInvalidRequest
	return errors.Is(err, otp.ErrNotFound) || errors.Is(err, otp.ErrUnavailable) ||
		errors.As(err, &budget) || errors.As(err, &invalid) || errors.Is(err, errBug)
}

func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return true
	}
	if len(pgErr.Code) < 2 {
		return false
	}
	switch pgErr.Code[:2] {
	case "08", // connection exception
		"40", // transaction rollback: serialization failure, deadlock
		"53", // insufficient resources
		"57", // operator intervention: shutdown, statement timeout
		"58": // system error
		return true
	}
	return false
}

// errBug marks a caller's mistake that no database state explains; it is never unavailable.
var errBug = errors.New("invalid use of the store")

// validID tells whether s is a uuid Postgres accepts; lookups by anything else find nothing.
func validID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil
}
