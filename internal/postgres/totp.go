package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/otp"
	"otpgate/internal/totp"
)

var _ totp.Store = (*Store)(nil)

// noRows turns pgx.ErrNoRows into the domain's not-found.
func noRows(op string, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return otp.ErrNotFound
	}
	return wrap(op, err)
}

const entityCols = `id, app_id, identity, created_at`

func scanEntity(r pgx.CollectableRow) (totp.Entity, error) {
	var e totp.Entity
	err := r.Scan(&e.ID, &e.AppID, &e.Identity, &e.CreatedAt)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err
}

// EnsureEntity implements totp.Store: one statement inserts the entity or, when the
// identity is taken, reads the one that holds it.
func (s *Store) EnsureEntity(ctx context.Context, e totp.Entity) (totp.Entity, bool, error) {
	if !validID(e.ID) || !validID(e.AppID) {
		return totp.Entity{}, false, errors.New("postgres: ensure entity: ids must be uuids")
	}
	rows, _ := s.pool.Query(ctx, `WITH ins AS (
			INSERT INTO totp_entities (`+entityCols+`) VALUES ($1, $2, $3, $4)
			ON CONFLICT (app_id, identity) DO NOTHING RETURNING `+entityCols+`)
		SELECT `+entityCols+`, true FROM ins
		UNION ALL SELECT `+entityCols+`, false FROM totp_entities WHERE app_id = $2 AND identity = $3`,
		e.ID, e.AppID, e.Identity, e.CreatedAt)
	type row struct {
		e       totp.Entity
		created bool
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.e.ID, &x.e.AppID, &x.e.Identity, &x.e.CreatedAt, &x.created)
		x.e.CreatedAt = x.e.CreatedAt.UTC()
		return x, err
	})
	if err != nil {
		return totp.Entity{}, false, wrap("ensure entity", err)
	}
	if len(got) == 0 {
		// The conflicting row was deleted between the insert and the read: try again once.
		return s.ensureEntityAgain(ctx, e)
	}
	return got[0].e, got[0].created, nil
}

func (s *Store) ensureEntityAgain(ctx context.Context, e totp.Entity) (totp.Entity, bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO totp_entities (`+entityCols+`) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_id, identity) DO NOTHING`, e.ID, e.AppID, e.Identity, e.CreatedAt)
	if err != nil {
		return totp.Entity{}, false, wrap("ensure entity", err)
	}
	if tag.RowsAffected() == 1 {
		return e, true, nil
	}
	old, err := s.Entity(ctx, e.AppID, e.Identity)
	return old, false, err
}

// Entity implements totp.Store.
func (s *Store) Entity(ctx context.Context, appID, identity string) (totp.Entity, error) {
	if !validID(appID) {
		return totp.Entity{}, otp.ErrNotFound
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+entityCols+` FROM totp_entities WHERE app_id = $1 AND identity = $2`, appID, identity)
	e, err := pgx.CollectExactlyOneRow(rows, scanEntity)
	return e, noRows("entity", err)
}

// Entities implements totp.Store.
func (s *Store) Entities(ctx context.Context, appID string) ([]totp.Entity, error) {
	if !validID(appID) {
		return nil, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+entityCols+` FROM totp_entities WHERE app_id = $1 ORDER BY created_at, id`, appID)
	out, err := pgx.CollectRows(rows, scanEntity)
	return out, wrap("entities", err)
}

// DeleteEntity implements totp.Store: factors and challenges go with it (ON DELETE CASCADE).
func (s *Store) DeleteEntity(ctx context.Context, appID, identity string) error {
	if !validID(appID) {
		return otp.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM totp_entities WHERE app_id = $1 AND identity = $2`, appID, identity)
	if err == nil && tag.RowsAffected() == 0 {
		return otp.ErrNotFound
	}
	return wrap("delete entity", err)
}

// factorCols are read by scanFactor, in this order; f is totp_factors, e totp_entities.
const factorCols = `f.id, f.app_id, f.entity_id, e.identity, f.friendly_name, f.status, f.alg, f.digits, f.period, f.skew,
	f.secret_sealed, f.last_step, f.created_at, f.updated_at`

func scanFactor(r pgx.CollectableRow) (totp.Factor, error) {
	var f totp.Factor
	var digits, period, skew int16
	err := r.Scan(&f.ID, &f.AppID, &f.EntityID, &f.Identity, &f.FriendlyName, &f.Status, &f.Config.Alg,
		&digits, &period, &skew, &f.Sealed, &f.LastStep, &f.CreatedAt, &f.UpdatedAt)
	f.Config.Digits, f.Config.Period, f.Config.Skew = int(digits), int(period), int(skew)
	f.CreatedAt, f.UpdatedAt = f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	return f, err
}

// CreateFactor implements totp.Store.
func (s *Store) CreateFactor(ctx context.Context, f totp.Factor) error {
	if !validID(f.ID) || !validID(f.AppID) || !validID(f.EntityID) {
		return errors.New("postgres: create factor: ids must be uuids")
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO totp_factors (id, app_id, entity_id, friendly_name, status, alg, digits, period, skew,
			secret_sealed, last_step, created_at, updated_at)
		SELECT $1, $2, id, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 FROM totp_entities WHERE id = $3 AND app_id = $2`,
		f.ID, f.AppID, f.EntityID, f.FriendlyName, string(f.Status), string(f.Config.Alg), f.Config.Digits, f.Config.Period, f.Config.Skew,
		f.Sealed, f.LastStep, f.CreatedAt, f.UpdatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		return otp.ErrNotFound
	}
	return wrap("create factor", err)
}

// Factor implements totp.Store.
func (s *Store) Factor(ctx context.Context, appID, identity, id string) (totp.Factor, error) {
	if !validID(appID) || !validID(id) {
		return totp.Factor{}, otp.ErrNotFound
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+factorCols+` FROM totp_factors f JOIN totp_entities e ON e.id = f.entity_id
		WHERE f.id = $1 AND f.app_id = $2 AND e.identity = $3`, id, appID, identity)
	f, err := pgx.CollectExactlyOneRow(rows, scanFactor)
	return f, noRows("factor", err)
}

// Factors implements totp.Store.
func (s *Store) Factors(ctx context.Context, appID, identity string) ([]totp.Factor, error) {
	if !validID(appID) {
		return nil, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+factorCols+` FROM totp_factors f JOIN totp_entities e ON e.id = f.entity_id
		WHERE e.app_id = $1 AND e.identity = $2 ORDER BY f.created_at, f.id`, appID, identity)
	out, err := pgx.CollectRows(rows, scanFactor)
	return out, wrap("factors", err)
}

// RenameFactor implements totp.Store.
func (s *Store) RenameFactor(ctx context.Context, appID, identity, id, name string, now time.Time) (totp.Factor, error) {
	if !validID(appID) || !validID(id) {
		return totp.Factor{}, otp.ErrNotFound
	}
	rows, _ := s.pool.Query(ctx, `WITH f AS (
			UPDATE totp_factors f SET friendly_name = $4, updated_at = $5 FROM totp_entities e
			WHERE e.id = f.entity_id AND f.id = $1 AND f.app_id = $2 AND e.identity = $3 RETURNING f.*)
		SELECT `+factorCols+` FROM f JOIN totp_entities e ON e.id = f.entity_id`, id, appID, identity, name, now)
	f, err := pgx.CollectExactlyOneRow(rows, scanFactor)
	return f, noRows("rename factor", err)
}

// DeleteFactor implements totp.Store: its challenges go with it (ON DELETE CASCADE).
func (s *Store) DeleteFactor(ctx context.Context, appID, identity, id string) error {
	if !validID(appID) || !validID(id) {
		return otp.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM totp_factors f USING totp_entities e
		WHERE e.id = f.entity_id AND f.id = $1 AND f.app_id = $2 AND e.identity = $3`, id, appID, identity)
	if err == nil && tag.RowsAffected() == 0 {
		return otp.ErrNotFound
	}
	return wrap("delete factor", err)
}

// AcceptStep implements totp.Store: the condition last_step < step sits in the UPDATE,
// so the row lock makes two acceptances of one step impossible; when it does not hold the
// factor is read as it is.
func (s *Store) AcceptStep(ctx context.Context, appID, id string, step int64, now time.Time) (totp.Factor, bool, error) {
	if !validID(appID) || !validID(id) {
		return totp.Factor{}, false, otp.ErrNotFound
	}
	rows, _ := s.pool.Query(ctx, `WITH f AS (
			UPDATE totp_factors SET last_step = $3, status = 'verified', updated_at = $4
			WHERE id = $1 AND app_id = $2 AND last_step < $3 RETURNING *)
		SELECT `+factorCols+` FROM f JOIN totp_entities e ON e.id = f.entity_id`, id, appID, step, now)
	got, err := pgx.CollectRows(rows, scanFactor)
	if err != nil {
		return totp.Factor{}, false, wrap("accept step", err)
	}
	if len(got) == 1 {
		return got[0], true, nil
	}
	rows, _ = s.pool.Query(ctx, `SELECT `+factorCols+` FROM totp_factors f JOIN totp_entities e ON e.id = f.entity_id
		WHERE f.id = $1 AND f.app_id = $2`, id, appID)
	f, err := pgx.CollectExactlyOneRow(rows, scanFactor)
	return f, false, noRows("accept step", err)
}

const challengeCols = `c.id, c.app_id, c.entity_id, e.identity, c.factor_id, c.status, c.created_at`

func scanChallenge(r pgx.CollectableRow) (totp.Challenge, error) {
	var c totp.Challenge
	err := r.Scan(&c.ID, &c.AppID, &c.EntityID, &c.Identity, &c.FactorID, &c.Status, &c.CreatedAt)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, err
}

// CreateChallenge implements totp.Store.
func (s *Store) CreateChallenge(ctx context.Context, c totp.Challenge) error {
	if !validID(c.ID) || !validID(c.AppID) || !validID(c.FactorID) {
		return errors.New("postgres: create challenge: ids must be uuids")
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO totp_challenges (id, app_id, entity_id, factor_id, status, created_at)
		SELECT $1, $2, entity_id, id, $4, $5 FROM totp_factors WHERE id = $3 AND app_id = $2`,
		c.ID, c.AppID, c.FactorID, string(c.Status), c.CreatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		return otp.ErrNotFound
	}
	return wrap("create challenge", err)
}

// Challenge implements totp.Store.
func (s *Store) Challenge(ctx context.Context, appID, identity, id string) (totp.Challenge, error) {
	if !validID(appID) || !validID(id) {
		return totp.Challenge{}, otp.ErrNotFound
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+challengeCols+` FROM totp_challenges c JOIN totp_entities e ON e.id = c.entity_id
		WHERE c.id = $1 AND c.app_id = $2 AND e.identity = $3`, id, appID, identity)
	c, err := pgx.CollectExactlyOneRow(rows, scanChallenge)
	return c, noRows("challenge", err)
}

// Challenges implements totp.Store.
func (s *Store) Challenges(ctx context.Context, appID, identity, factorID string, status totp.ChallengeStatus) ([]totp.Challenge, error) {
	if !validID(appID) || (factorID != "" && !validID(factorID)) {
		return nil, nil
	}
	var factor *string
	if factorID != "" {
		factor = &factorID
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+challengeCols+` FROM totp_challenges c JOIN totp_entities e ON e.id = c.entity_id
		WHERE e.app_id = $1 AND e.identity = $2 AND ($3::uuid IS NULL OR c.factor_id = $3) AND ($4 = '' OR c.status = $4)
		ORDER BY c.created_at DESC, c.id DESC`, appID, identity, factor, string(status))
	out, err := pgx.CollectRows(rows, scanChallenge)
	return out, wrap("challenges", err)
}
