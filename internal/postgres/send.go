package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/events"
	"otpgate/internal/otp"
)

// BeginSend implements otp.Store in one statement, in autocommit: otpgate_begin_send
// (migrations/00160) counts the send on the phone's pending verification, or creates one,
// and writes the send row whole. The code hash is tied to the verification's id: with p.Seen the
// first call brings the hash for its id, and the function counts the resend with it if it
// is still the phone's pending verification; otherwise (nothing seen, or the pending one is
// another by now) it answers "hash" with the id it holds, without writing, and a second
// call brings the hash for that one.
func (s *Store) BeginSend(ctx context.Context, p otp.BeginSend) (otp.SendStart, error) {
	if !validID(p.NewVerificationID) || !validID(p.SendID) {
		return otp.SendStart{}, fmt.Errorf("postgres: begin send: %w: ids must be uuids", errBug)
	}
	p.AppID = otp.StoredAppID(p.AppID)
	if !validID(p.AppID) {
		return otp.SendStart{}, fmt.Errorf("postgres: begin send: %w: app id must be a uuid", errBug)
	}
	newHash := p.CodeHash(p.NewVerificationID)
	channel := deniedChannel(p.Channel)
	var (
		knownID   *string
		knownHash []byte
	)
	if p.Seen != nil && canonicalID(p.Seen.ID) {
		knownID, knownHash = &p.Seen.ID, p.CodeHash(p.Seen.ID)
	}
	for range 3 {
		var outcome string
		v, err := scanBegun(outcomeRow{s.beginSendRow(ctx, p, channel, newHash, knownID, knownHash), &outcome})
		if err != nil {
			return otp.SendStart{}, wrap("begin send", err)
		}
		switch outcome {
		case "created", "counted":
			// The row holds the address's index; the caller's address is the address.
			v.Address = p.Phone
			// What the call wrote: the send's transaction is the verification's.
			if !p.Transaction.IsZero() {
				v.Transaction = p.Transaction
			}
			return otp.SendStart{Verification: v, Created: outcome == "created"}, nil
		case "budget":
			return otp.SendStart{}, fmt.Errorf("postgres: begin send: %w", &otp.ErrSendBudget{MaxSends: p.MaxSends, ExpiresAt: v.ExpiresAt})
		case "hash":
			knownID, knownHash = &v.ID, p.CodeHash(v.ID)
		default:
			return otp.SendStart{}, fmt.Errorf("postgres: begin send: %w: outcome %q", errBug, outcome)
		}
	}
	return otp.SendStart{}, errors.New("postgres: begin send: the phone's pending verification kept changing")
}

// beginSendSQL calls otpgate_begin_send (migrations/00160), which writes the send row whole:
// why the fraud guard let it through, whether it went to a test number, its estimated cost,
// and for a payment (PSD2) the transaction, which its verification takes too.
const beginSendSQL = `SELECT * FROM otpgate_begin_send(
	$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
	$22, $23, $24, $25, $26, $27)`

// beginSendRow makes one call of otpgate_begin_send.
func (s *Store) beginSendRow(ctx context.Context, p otp.BeginSend, channel string, newHash []byte, knownID *string, knownHash []byte) pgx.Row {
	a := s.store(p.Phone)
	return s.pool.QueryRow(ctx, beginSendSQL, p.AppID, a.index, channel, p.Locale, p.ClientIP, p.Provider, p.Now, p.Now.Add(p.TTL), p.MaxSends, p.MaxAttempts,
		p.NewVerificationID, newHash, knownID, knownHash, p.SendID, p.Shadow, p.Country, p.Encoding, p.Segments,
		a.sealed, a.prefix,
		fraudJSON(p.Fraud), p.Test, p.Cost, p.Currency, nullText(p.Transaction.Amount), nullText(p.Transaction.Payee))
}

// outcomeRow reads a leading outcome column before the verification's columns.
type outcomeRow struct {
	row     pgx.Row
	outcome *string
}

func (r outcomeRow) Scan(dest ...any) error {
	return r.row.Scan(append([]any{r.outcome}, dest...)...)
}

// FinishSend implements otp.Store. Without Undo, the outcome goes to s.Outcomes when
// there is one and it has room, and is written with the next batch; otherwise it is
// written at once. With Undo, the count is given back at once too: a verification this
// send created is canceled unless another send has joined it.
func (s *Store) FinishSend(ctx context.Context, p otp.FinishSend) error {
	if p.Status != otp.SendSent && p.Status != otp.SendFailed {
		return fmt.Errorf("postgres: finish send: %w: status %q", errBug, p.Status)
	}
	if !validID(p.SendID) {
		return fmt.Errorf("postgres: finish send: %w", otp.ErrNotFound)
	}
	if !p.Undo && s.Outcomes != nil && s.Outcomes.record(p) {
		return nil
	}
	return s.inTx(ctx, "finish send", func(tx pgx.Tx) error {
		var vid, provider string
		args := []any{p.SendID, string(p.Status), p.ProviderID, p.Error, p.Now, p.Provider, attemptsJSON(p.Attempts)}
		err := pgx.ErrNoRows
		if from, to, ok := sendWindow(p.SendID); ok {
			err = tx.QueryRow(ctx, finishSendSQL+` AND created_at >= $8 AND created_at < $9`+finishSendReturning,
				append(args, from, to)...).Scan(&vid, &provider)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			err = tx.QueryRow(ctx, finishSendSQL+finishSendReturning, args...).Scan(&vid, &provider)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		if !p.Undo {
			if p.Status != otp.SendSent {
				return nil
			}
			_, err := tx.Exec(ctx, `WITH r AS (SELECT $1::uuid AS send_id, $2::uuid AS verification_id, $3::text AS provider,
				$4::timestamptz AS at), `+sentEventsCTE+` SELECT 1`, p.SendID, vid, provider, p.Now)
			return err
		}
		var status string
		err = tx.QueryRow(ctx, `UPDATE verifications SET
				sends = greatest(sends - 1, 0),
				status = CASE WHEN $2 AND sends <= 1 THEN 'canceled' ELSE status END,
				closed_at = CASE WHEN $2 AND sends <= 1 THEN $3 ELSE closed_at END
			WHERE id = $1 AND status = 'pending' RETURNING status`, vid, p.Created, p.Now).Scan(&status)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil || status != string(otp.StatusCanceled):
			return err
		}
		// The verification's only message could not be sent: it failed, for its app.
		return emitVerificationTx(ctx, tx, events.VerificationFailed, vid, map[string]string{"reason": "not_delivered"}, p.Now)
	})
}

// finishSendSQL updates one send row by its id, finishSendReturning answers what FinishSend
// reads of it; between them may go the window of its creation time (sendWindow).
const (
	finishSendSQL = `UPDATE sends SET status = $2, provider_message_id = $3, error = $4, updated_at = $5,
			provider = coalesce(nullif($6, ''), provider), attempts = $7
		WHERE id = $1 AND verification_id IS NOT NULL`
	finishSendReturning = ` RETURNING verification_id, provider`
)

// sentEventsCTE follows a CTE r(send_id, verification_id, provider, at) of sends just marked
// sent: it writes verification.sent for those whose app has a subscribed endpoint. It takes
// a share lock on each such verification first, so their events are numbered after every
// committed change of it and before any later one (a check waits for the lock). With no
// endpoint subscribed anywhere it reads nothing but that (a one-time filter), not each
// verification.
const sentEventsCTE = `v AS (
		SELECT v.id, v.app_id, v.channel, v.phone, v.phone_sealed, v.status, v.sends, v.attempts, v.expires_at FROM verifications v
		WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE 'verification.sent' = ANY(event_types))
			AND v.id = ANY(ARRAY(SELECT verification_id FROM r))
			AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.app_id = v.app_id AND 'verification.sent' = ANY(w.event_types))
		ORDER BY v.id
		FOR SHARE OF v
	), e AS (
		INSERT INTO event_outbox (event_id, endpoint_id, type, subject, data, created_at, next_attempt_at)
		SELECT otpgate_event_id('verification.sent', r.send_id), w.id, 'verification.sent', v.id,
			` + verificationData + ` || jsonb_build_object('send_id', r.send_id, 'provider', r.provider), r.at, r.at
		FROM r JOIN v ON v.id = r.verification_id
			JOIN webhook_endpoints w ON w.app_id = v.app_id AND 'verification.sent' = ANY(w.event_types)
		ORDER BY r.at, r.send_id
		ON CONFLICT DO NOTHING
	)`

// nullText stores the empty string as NULL.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
