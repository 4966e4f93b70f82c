package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

var _ apps.Store = (*Store)(nil)

// appCols are read by scanApp, in this order.
const appCols = `id, name, code_length, code_ttl_ms, max_sends, max_attempts, locales,
	allowed_countries, channels, send_rules, check_rules, access, created_at, updated_at,
	templates, webotp_domain, android_app_hash, denied_number_types, psd2_enabled,
	allowed_origins, token_ttl_ms, token_address`

// keyCols are read by scanKey, in this order.
const keyCols = `id, app_id, name, secret_sha256, trusted_client_ip, created_at, last_used_at, revoked_at`

func scanApp(row pgx.Row) (otp.App, error) {
	var (
		a                 otp.App
		ttlMS             int64
		sendRules, checks string
		access            string
		templates         []byte
		tokenTTLMS        int64
		tokenAddress      string
	)
	err := row.Scan(&a.ID, &a.Name, &a.CodeLength, &ttlMS, &a.MaxSends, &a.MaxAttempts, &a.Locales,
		&a.AllowedCountries, &a.Channels, &sendRules, &checks, &access, &a.CreatedAt, &a.UpdatedAt,
		&templates, &a.WebOTPDomain, &a.AndroidAppHash, &a.DeniedNumberTypes, &a.PSD2,
		&a.AllowedOrigins, &tokenTTLMS, &tokenAddress)
	if err != nil {
		return otp.App{}, err
	}
	if a.Templates, err = parseTemplates(templates); err != nil {
		return otp.App{}, fmt.Errorf("app %s: %w", a.ID, err)
	}
	a.CodeTTL, a.Access = time.Duration(ttlMS)*time.Millisecond, otp.Access(access)
	a.TokenTTL, a.TokenAddress = time.Duration(tokenTTLMS)*time.Millisecond, otp.TokenAddress(tokenAddress)
	if len(a.AllowedOrigins) == 0 {
		a.AllowedOrigins = nil
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	// The rules were validated when written; a row that no longer parses is a bug.
	if err := a.SendRules.UnmarshalText([]byte(sendRules)); err != nil {
		return otp.App{}, fmt.Errorf("app %s: send_rules: %w", a.ID, err)
	}
	if err := a.CheckRules.UnmarshalText([]byte(checks)); err != nil {
		return otp.App{}, fmt.Errorf("app %s: check_rules: %w", a.ID, err)
	}
	return a, nil
}

func scanKey(row pgx.Row) (apps.Key, error) {
	var (
		k             apps.Key
		used, revoked *time.Time
	)
	if err := row.Scan(&k.ID, &k.AppID, &k.Name, &k.Hash, &k.TrustedClientIP, &k.CreatedAt, &used, &revoked); err != nil {
		return apps.Key{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	if used != nil {
		k.LastUsedAt = used.UTC()
	}
	if revoked != nil {
		k.RevokedAt = revoked.UTC()
	}
	return k, nil
}

// rulesText stores a rule list as operators write it; none is ”.
func rulesText(r rate.Rules) string {
	if len(r) == 0 {
		return ""
	}
	return r.String()
}

// LoadApps implements apps.Store with one snapshot of the three tables.
func (s *Store) LoadApps(ctx context.Context) (apps.Set, error) {
	var set apps.Set
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		if _, set.Version, err = settingIn(ctx, tx, apps.SettingName); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT `+appCols+` FROM apps WHERE deleted_at IS NULL ORDER BY id`)
		if set.Apps, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (otp.App, error) { return scanApp(r) }); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT `+keyCols+` FROM app_keys WHERE revoked_at IS NULL ORDER BY created_at, id`)
		if set.Keys, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (apps.Key, error) { return scanKey(r) }); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT `+testNumberCols+` FROM app_test_numbers WHERE expires_at > $1 ORDER BY created_at DESC, id DESC`, s.Now())
		set.TestNumbers, err = pgx.CollectRows(rows, scanTestNumber)
		return err
	})
	if err != nil {
		return apps.Set{}, wrap("load apps", err)
	}
	return set, nil
}

// AppByID implements apps.Store.
func (s *Store) AppByID(ctx context.Context, id string) (otp.App, error) {
	if !validID(id) {
		return otp.App{}, fmt.Errorf("postgres: app: %w", otp.ErrNotFound)
	}
	a, err := scanApp(s.pool.QueryRow(ctx, `SELECT `+appCols+` FROM apps WHERE id = $1 AND deleted_at IS NULL`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = otp.ErrNotFound
	}
	return a, wrap("app", err)
}

// AppKeys implements apps.Store.
func (s *Store) AppKeys(ctx context.Context, appID string) ([]apps.Key, error) {
	if !validID(appID) {
		return nil, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+keyCols+` FROM app_keys WHERE app_id = $1 ORDER BY created_at, id`, appID)
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (apps.Key, error) { return scanKey(r) })
	return keys, wrap("app keys", err)
}

// CreateApp implements apps.Store.
func (s *Store) CreateApp(ctx context.Context, a otp.App, audit history.AdminAction) error {
	a, err := apps.Validate(a)
	if err != nil || a.ID == "" {
		return fmt.Errorf("postgres: create app: %w", errors.Join(err, errIf(a.ID == "", "app without id")))
	}
	return s.changeApps(ctx, "create app", audit, func(tx pgx.Tx) (int64, error) {
		tag, err := tx.Exec(ctx, `INSERT INTO apps (`+appCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
			appArgs(a)...)
		return tag.RowsAffected(), err
	})
}

// UpdateApp implements apps.Store.
func (s *Store) UpdateApp(ctx context.Context, a otp.App, audit history.AdminAction) error {
	a, err := apps.Validate(a)
	if err != nil {
		return fmt.Errorf("postgres: update app: %w", err)
	}
	if !validID(a.ID) {
		return fmt.Errorf("postgres: update app: %w", otp.ErrNotFound)
	}
	return s.changeApps(ctx, "update app", audit, func(tx pgx.Tx) (int64, error) {
		tag, err := tx.Exec(ctx, `UPDATE apps SET name = $2, code_length = $3, code_ttl_ms = $4, max_sends = $5,
				max_attempts = $6, locales = $7, allowed_countries = $8, channels = $9, send_rules = $10,
				check_rules = $11, access = $12, updated_at = $13, templates = $14, webotp_domain = $15, android_app_hash = $16,
				denied_number_types = $17, psd2_enabled = $18, allowed_origins = $19, token_ttl_ms = $20, token_address = $21
			WHERE id = $1 AND deleted_at IS NULL`, slices.Delete(appArgs(a), 12, 13)...)
		return tag.RowsAffected(), err
	})
}

// appArgs are an app's columns in the order of appCols.
func appArgs(a otp.App) []any {
	orEmpty := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return []any{a.ID, a.Name, a.CodeLength, a.CodeTTL.Milliseconds(), a.MaxSends, a.MaxAttempts,
		orEmpty(a.Locales), orEmpty(a.AllowedCountries), orEmpty(a.Channels),
		rulesText(a.SendRules), rulesText(a.CheckRules), string(a.Access), a.CreatedAt, a.UpdatedAt,
		templatesJSON(a.Templates), a.WebOTPDomain, a.AndroidAppHash, numberTypes(a.DeniedNumberTypes), a.PSD2,
		orEmpty(a.AllowedOrigins), a.TokenTTL.Milliseconds(), string(a.TokenAddress)}
}

// numberTypes is an app's denied number types as the column keeps them: NULL for the
// server's, an array (maybe empty) for its own.
func numberTypes(types *[]string) any {
	if types == nil {
		return nil
	}
	if *types == nil {
		return []string{}
	}
	return *types
}

// DeleteApp implements apps.Store.
func (s *Store) DeleteApp(ctx context.Context, id string, at time.Time, audit history.AdminAction) error {
	if !validID(id) {
		return fmt.Errorf("postgres: delete app: %w", otp.ErrNotFound)
	}
	return s.changeApps(ctx, "delete app", audit, func(tx pgx.Tx) (int64, error) {
		tag, err := tx.Exec(ctx, `UPDATE apps SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, id, at)
		if err != nil || tag.RowsAffected() == 0 {
			return 0, err
		}
		if _, err = tx.Exec(ctx, `UPDATE app_keys SET revoked_at = $2 WHERE app_id = $1 AND revoked_at IS NULL`, id, at); err != nil {
			return 0, err
		}
		// A deleted app reports nothing more: its endpoints go, and their deliveries with
		// them (ON DELETE CASCADE), as when an endpoint is deleted on its own.
		_, err = tx.Exec(ctx, `DELETE FROM webhook_endpoints WHERE app_id = $1`, id)
		return 1, err
	})
}

// CreateKey implements apps.Store.
func (s *Store) CreateKey(ctx context.Context, k apps.Key, audit history.AdminAction) error {
	if !validID(k.AppID) || k.ID == "" {
		return fmt.Errorf("postgres: create key: %w: key without id or app", errBug)
	}
	if err := otp.CheckTextIn("key", k); err != nil {
		return fmt.Errorf("postgres: create key: %w", err)
	}
	return s.changeApps(ctx, "create key", audit, func(tx pgx.Tx) (int64, error) {
		tag, err := tx.Exec(ctx, `INSERT INTO app_keys (id, app_id, name, secret_sha256, trusted_client_ip, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, k.ID, k.AppID, k.Name, k.Hash, k.TrustedClientIP, k.CreatedAt)
		return tag.RowsAffected(), err
	})
}

// RevokeKey implements apps.Store.
func (s *Store) RevokeKey(ctx context.Context, appID, keyID string, at time.Time, audit history.AdminAction) error {
	if !validID(appID) {
		return fmt.Errorf("postgres: revoke key: %w", otp.ErrNotFound)
	}
	return s.changeApps(ctx, "revoke key", audit, func(tx pgx.Tx) (int64, error) {
		tag, err := tx.Exec(ctx, `UPDATE app_keys SET revoked_at = $3 WHERE id = $1 AND app_id = $2 AND revoked_at IS NULL`, keyID, appID, at)
		return tag.RowsAffected(), err
	})
}

// TouchKeys implements apps.Store with one statement; it never moves a time back.
func (s *Store) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids, times := make([]string, 0, len(used)), make([]time.Time, 0, len(used))
	for id, at := range used {
		ids, times = append(ids, id), append(times, at)
	}
	_, err := s.pool.Exec(ctx, `UPDATE app_keys k SET last_used_at = greatest(k.last_used_at, u.at)
		FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at) WHERE k.id = u.id`, ids, times)
	return wrap("touch keys", err)
}

// changeApps runs one change, its audit entry and the version bump in one transaction.
// change reports how many rows it changed: none is otp.ErrNotFound, and nothing is kept.
func (s *Store) changeApps(ctx context.Context, op string, audit history.AdminAction, change func(pgx.Tx) (int64, error)) error {
	if err := audit.Validate(); err != nil {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	if audit.Time.IsZero() {
		audit.Time = s.Now()
	}
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		n, err := change(tx)
		if err != nil {
			return err
		}
		if n == 0 {
			return otp.ErrNotFound
		}
		if err := s.bumpSettingTx(ctx, tx, apps.SettingName); err != nil {
			return err
		}
		return s.auditTx(ctx, tx, audit)
	})
}

// errIf is an error with text when cond holds, else nil.
func errIf(cond bool, text string) error {
	if !cond {
		return nil
	}
	return errors.New(strings.TrimSpace(text))
}
