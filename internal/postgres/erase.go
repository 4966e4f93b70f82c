package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
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
		blocks, details, err := redactFraudTx(ctx, tx, address, redacted)
		if err != nil {
			return err
		}
		out.FraudBlocks, out.AuditEntries = blocks, out.AuditEntries+details
		return s.auditTx(ctx, tx, audit)
	})
	if err != nil {
		return history.Erased{}, err
	}
	return out, nil
}

// redactFraudTx rewrites the blocks whose reason names address as the send that tripped
// them, their events and their audit entries, to name the mask of redacted ("phone:<mask>");
// it returns how many blocks and audit entries it rewrote. The three are the guard's
// blocks, its events and the audit log: small next to the history.
func redactFraudTx(ctx context.Context, tx pgx.Tx, address, redacted string) (blocks, audited int, err error) {
	_, mask, _ := strings.Cut(redacted, ":")
	was, now := fraud.TrippedBy(address), fraud.TrippedBy(mask)
	rows, err := tx.Query(ctx, `UPDATE fraud_blocks SET reason = replace(reason, $1, $2)
		WHERE strpos(reason, $1) > 0 RETURNING id`, was, now)
	if err != nil {
		return 0, 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[pgtype.UUID])
	if err != nil {
		return 0, 0, err
	}
	if len(ids) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE event_outbox SET data = jsonb_set(data, '{reason}', to_jsonb(replace(data->>'reason', $2, $3)))
			WHERE subject = ANY($1::uuid[]) AND type IN ($4, $5) AND strpos(data->>'reason', $2) > 0`,
			ids, was, now, events.FraudBlockStarted, events.FraudBlockEnded); err != nil {
			return 0, 0, err
		}
	}
	// Audit entries are matched by their own words, whatever their block's row holds.
	tag, err := tx.Exec(ctx, `UPDATE admin_actions SET detail = replace(detail, $2, $3)
		WHERE action = $1 AND strpos(detail, $2) > 0`, fraud.ActionBlockStarted, was, now)
	return len(ids), int(tag.RowsAffected()), err
}

var _ history.EraseStore = (*Store)(nil)
