package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"otpgate/internal/otp"
)

// wrap gives err the operation's context and marks it otp.ErrUnavailable when it is a
// real failure to reach the database in time: a refused or dropped connection, a
// timeout, a closed pool, a server shutting down or out of resources. Anything else —
// a statement Postgres rejected, a scan into the wrong type, a bug — stays what it is,
// so it becomes a 500 logged as an error instead of a 503 logged as a warning.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if !errors.Is(err, otp.ErrUnavailable) && unavailable(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, otp.ErrUnavailable, err)
	}
	if invalidText(err) {
		// The stores refuse such text before they write (otp.CheckTextIn); this catches
		// what reaches a statement anyway, such as a lookup by a key that holds a NUL.
		return fmt.Errorf("postgres: %s: %w: %w", op, &otp.ErrInvalidText{Field: "text", Problem: "must be valid UTF-8 without NUL characters"}, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// invalidText reports whether PostgreSQL refused err's statement for text it cannot
// keep: a NUL or invalid UTF-8 in text (22021), or \u0000 in jsonb (22P05).
func invalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}

// unavailable reports whether err means the database could not do its job in time,
// rather than that it refused or misunderstood what it was asked.
func unavailable(err error) bool {
	var (
		pgErr   *pgconn.PgError
		connErr *pgconn.ConnectError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &pgErr):
		if len(pgErr.Code) < 2 {
			return false
		}
		if pgErr.Code == "08P01" {
			return false // protocol violation: our statement and its arguments disagree
		}
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"40", // transaction rollback: serialization failure, deadlock — try again later
			"53", // insufficient resources: too many connections, out of memory or disk
			"57", // operator intervention: shutdown, statement timeout, query canceled
			"58": // system error
			return true
		}
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), pgconn.Timeout(err):
		return true
	case errors.As(err, &connErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, puddle.ErrClosedPool), errors.Is(err, pgconn.ErrConnClosed):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// The server closed the connection in the middle of an answer.
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

// canonicalID reports whether s is a uuid as PostgreSQL prints it, the form of the ids a
// code hash is tied to.
func canonicalID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
