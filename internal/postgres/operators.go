package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
)

var _ operators.Store = (*Store)(nil)

// operatorCols are read by scanOperator, in this order.
const operatorCols = `id, email, COALESCE(subject, ''), name, role, role_from_console, disabled,
	created_at, updated_at, last_seen_at, signed_in_at, session_epoch`

func scanOperator(row pgx.Row) (operators.Operator, error) {
	var (
		o            operators.Operator
		role         string
		seen, signed *time.Time
	)
	err := row.Scan(&o.ID, &o.Email, &o.Subject, &o.Name, &role, &o.RoleFromConsole, &o.Disabled,
		&o.CreatedAt, &o.UpdatedAt, &seen, &signed, &o.SessionEpoch)
	if err != nil {
		return operators.Operator{}, err
	}
	o.Role = operators.Role(role)
	o.CreatedAt, o.UpdatedAt = o.CreatedAt.UTC(), o.UpdatedAt.UTC()
	if seen != nil {
		o.LastSeenAt = seen.UTC()
	}
	if signed != nil {
		o.SignedInAt = signed.UTC()
	}
	return o, nil
}

// ListOperators implements operators.Store.
func (s *Store) ListOperators(ctx context.Context) ([]operators.Operator, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+operatorCols+` FROM operators ORDER BY email`)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (operators.Operator, error) { return scanOperator(r) })
	return out, wrap("list operators", err)
}

// OperatorByID implements operators.Store.
func (s *Store) OperatorByID(ctx context.Context, id string) (operators.Operator, error) {
	if !validID(id) {
		return operators.Operator{}, otp.ErrNotFound
	}
	return s.operatorWhere(ctx, "operator by id", `id = $1`, id)
}

// OperatorByEmail implements operators.Store.
func (s *Store) OperatorByEmail(ctx context.Context, email string) (operators.Operator, error) {
	return s.operatorWhere(ctx, "operator by email", `email = $1`, email)
}

// OperatorBySubject implements operators.Store.
func (s *Store) OperatorBySubject(ctx context.Context, subject string) (operators.Operator, error) {
	return s.operatorWhere(ctx, "operator by subject", `subject = $1`, subject)
}

func (s *Store) operatorWhere(ctx context.Context, op, where string, arg any) (operators.Operator, error) {
	o, err := scanOperator(s.pool.QueryRow(ctx, `SELECT `+operatorCols+` FROM operators WHERE `+where, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return operators.Operator{}, otp.ErrNotFound
	}
	return o, wrap(op, err)
}

// nullable stores "" as NULL, for unique columns that may be unset.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// operatorTaken translates a unique violation of operators into the field it names.
func operatorTaken(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		field := "email"
		if pgErr.ConstraintName == "operators_subject_key" {
			field = "subject"
		}
		return &otp.ErrInvalidRequest{Fields: map[string]string{field: "another operator has it"}}
	}
	return err
}

// CreateOperator implements operators.Store.
func (s *Store) CreateOperator(ctx context.Context, o operators.Operator, audit history.AdminAction) error {
	err := s.inTx(ctx, "create operator", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO operators (id, email, subject, name, role, role_from_console, disabled, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			o.ID, o.Email, nullable(o.Subject), o.Name, string(o.Role), o.RoleFromConsole, o.Disabled, o.CreatedAt, o.UpdatedAt)
		if err != nil {
			return operatorTaken(err)
		}
		return s.auditTx(ctx, tx, audit)
	})
	return err
}

// UpdateOperator implements operators.Store.
func (s *Store) UpdateOperator(ctx context.Context, o operators.Operator, keepAnAdmin bool, audit history.AdminAction) error {
	if !validID(o.ID) {
		return otp.ErrNotFound
	}
	return s.inTx(ctx, "update operator", func(tx pgx.Tx) error {
		if keepAnAdmin && !o.ActiveAdmin() {
			if err := keepAnActiveAdmin(ctx, tx, o.ID); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE operators SET email = $2, subject = $3, name = $4, role = $5,
			role_from_console = $6, disabled = $7, updated_at = $8 WHERE id = $1`,
			o.ID, o.Email, nullable(o.Subject), o.Name, string(o.Role), o.RoleFromConsole, o.Disabled, o.UpdatedAt)
		if err != nil {
			return operatorTaken(err)
		}
		if tag.RowsAffected() == 0 {
			return otp.ErrNotFound
		}
		return s.auditTx(ctx, tx, audit)
	})
}

// EndSessions implements operators.Store.
func (s *Store) EndSessions(ctx context.Context, operatorID string) error {
	if !validID(operatorID) {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE operators SET session_epoch = session_epoch + 1 WHERE id = $1`, operatorID)
	return wrap("end sessions", err)
}

// keepAnActiveAdmin refuses, with operators.ErrLastAdmin, a change that takes the account
// id away from the active admins when it is the last of them. It locks every active
// admin's row first, so two transactions that each demote one of the last two admins
// wait for each other, and the second sees that the first left only its own.
func keepAnActiveAdmin(ctx context.Context, tx pgx.Tx, id string) error {
	rows, _ := tx.Query(ctx, `SELECT id::text FROM operators WHERE role = 'admin' AND NOT disabled ORDER BY id FOR UPDATE`)
	admins, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(admins) == 1 && admins[0] == id {
		return operators.ErrLastAdmin
	}
	return nil
}

// tokenCols are read by scanToken, in this order.
const tokenCols = `id, operator_id, name, secret_sha256, created_at, expires_at, revoked_at, last_used_at`

func scanToken(row pgx.Row) (operators.Token, error) {
	var (
		t             operators.Token
		revoked, used *time.Time
	)
	if err := row.Scan(&t.ID, &t.OperatorID, &t.Name, &t.Hash, &t.CreatedAt, &t.ExpiresAt, &revoked, &used); err != nil {
		return operators.Token{}, err
	}
	t.CreatedAt, t.ExpiresAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC()
	if revoked != nil {
		t.RevokedAt = revoked.UTC()
	}
	if used != nil {
		t.LastUsedAt = used.UTC()
	}
	return t, nil
}

// OperatorTokens implements operators.Store.
func (s *Store) OperatorTokens(ctx context.Context, operatorID string) ([]operators.Token, error) {
	if !validID(operatorID) {
		return nil, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+tokenCols+` FROM operator_tokens WHERE operator_id = $1 ORDER BY created_at, id`, operatorID)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (operators.Token, error) { return scanToken(r) })
	return out, wrap("operator tokens", err)
}

// CreateToken implements operators.Store.
func (s *Store) CreateToken(ctx context.Context, t operators.Token, audit history.AdminAction) error {
	if !validID(t.OperatorID) {
		return otp.ErrNotFound
	}
	return s.inTx(ctx, "create operator token", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO operator_tokens (id, operator_id, name, secret_sha256, created_at, expires_at)
			SELECT $1, id, $3, $4, $5, $6 FROM operators WHERE id = $2`,
			t.ID, t.OperatorID, t.Name, t.Hash, t.CreatedAt, t.ExpiresAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return otp.ErrNotFound
		}
		return s.auditTx(ctx, tx, audit)
	})
}

// RevokeToken implements operators.Store.
func (s *Store) RevokeToken(ctx context.Context, operatorID, tokenID string, at time.Time, audit history.AdminAction) error {
	if !validID(operatorID) {
		return otp.ErrNotFound
	}
	return s.inTx(ctx, "revoke operator token", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE operator_tokens SET revoked_at = $3
			WHERE operator_id = $1 AND id = $2 AND revoked_at IS NULL`, operatorID, tokenID, at)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return otp.ErrNotFound
		}
		return s.auditTx(ctx, tx, audit)
	})
}

// TokenByHash implements operators.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (operators.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM operator_tokens WHERE secret_sha256 = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return operators.Token{}, otp.ErrNotFound
	}
	return t, wrap("token by hash", err)
}

// TouchOperator implements operators.Store.
func (s *Store) TouchOperator(ctx context.Context, operatorID, tokenID string, at time.Time) error {
	if !validID(operatorID) {
		return nil
	}
	_, err := s.pool.Exec(ctx, `WITH t AS (UPDATE operator_tokens SET last_used_at = $3 WHERE $2 <> '' AND id = $2 AND operator_id = $1)
		UPDATE operators SET last_seen_at = $3, signed_in_at = CASE WHEN $2 = '' THEN $3 ELSE signed_in_at END
		WHERE id = $1`, operatorID, tokenID, at)
	return wrap("touch operator", err)
}
