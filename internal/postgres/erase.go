package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// EraseAddress implements history.EraseStore in one transaction. Verifications are found
// by the address's stored form (addressIndex) in every app; their events go first (the
// outbox names them by subject, without a foreign key), then their attempts and sends
// with the refused sends of the address, then the verifications. Events that name the
// address in their payload without a subject are deleted too, so that none survives.
func (s *Store) EraseAddress(ctx context.Context, address, redacted string, audit history.AdminAction) (history.Erased, error) {
	var out history.Erased
	if err := otp.CheckTextIn("erasure", struct{ Address, Redacted string }{address, redacted}); err != nil {
		return out, fmt.Errorf("postgres: erase address: %w", err)
	}
	if err := audit.Validate(); err != nil {
		return out, fmt.Errorf("postgres: erase address: %w", err)
	}
	if audit.Time.IsZero() {
		audit.Time = s.Now()
	}
	stored := s.addressIndex(address)
	err := s.inTx(ctx, "erase address", func(tx pgx.Tx) error {
		var ids []string
		rows, err := tx.Query(ctx, `SELECT id::text FROM verifications WHERE phone = $1 FOR UPDATE`, stored)
		if err != nil {
			return err
		}
		if ids, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		count := func(n *int, sql string, args ...any) error {
			tag, err := tx.Exec(ctx, sql, args...)
			*n = int(tag.RowsAffected())
			return err
		}
		// A refused send's event has no subject; it names its send, whose row says whose
		// it was (its "to" is sealed, which no comparison finds; a row written before
		// 00110 may still hold the plain address or its index).
		rows, err = tx.Query(ctx, `SELECT id::text FROM sends WHERE verification_id = ANY($1::uuid[]) OR phone = $2`, ids, stored)
		if err != nil {
			return err
		}
		sendIDs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if err := count(&out.Events, `DELETE FROM event_outbox
			WHERE subject = ANY($1::uuid[])
			   OR (subject IS NULL AND (data->>'send_id' = ANY($3::text[]) OR data->>'to' = ANY($2::text[])))`,
			ids, []string{address, stored}, sendIDs); err != nil {
			return err
		}
		if err := count(&out.Attempts, `DELETE FROM attempts WHERE verification_id = ANY($1::uuid[])`, ids); err != nil {
			return err
		}
		if err := count(&out.Sends, `DELETE FROM sends WHERE verification_id = ANY($1::uuid[]) OR phone = $2`, ids, stored); err != nil {
			return err
		}
		if err := count(&out.Verifications, `DELETE FROM verifications WHERE id = ANY($1::uuid[])`, ids); err != nil {
			return err
		}
		// Audit targets naming an address hold it sealed (sealTarget), which no comparison
		// finds: the entries naming one are opened to find the person's. The audit log is
		// the operators' changes, small next to the history.
		rows, err = tx.Query(ctx, `SELECT id, target FROM admin_actions WHERE target LIKE 'phone:%' OR target LIKE 'email:%' FOR UPDATE`)
		if err != nil {
			return err
		}
		var named []int64
		var id int64
		var target string
		if _, err := pgx.ForEachRow(rows, []any{&id, &target}, func() error {
			if plain, err := s.openTarget(target); err == nil && (plain == "phone:"+address || plain == "email:"+address) {
				named = append(named, id)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := count(&out.AuditEntries, `UPDATE admin_actions SET target = $1 WHERE id = ANY($2::bigint[])`, redacted, named); err != nil {
			return err
		}
		return s.auditTx(ctx, tx, audit)
	})
	if err != nil {
		return history.Erased{}, err
	}
	return out, nil
}

var _ history.EraseStore = (*Store)(nil)
