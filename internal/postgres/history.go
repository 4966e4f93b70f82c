package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// sendCols are read by scanSend, in this order; v is the send's verification, if any.
const sendCols = `s.id, coalesce(s.verification_id::text, ''), s.created_at, ` + "coalesce(nullif(s.phone_sealed, ''), s.phone)" + `, s.client_ip,
	s.status, s.reason, s.provider, s.provider_message_id, s.error, s.updated_at,
	coalesce(v.status, ''), coalesce(v.expires_at, 'epoch'), s.delivery, s.delivery_error, s.app_id, s.shadow,
	s.channel, s.country, s.encoding, s.segments, s.attempts, s.delivered_at, s.fraud, s.test, s.cost, s.currency,
	s.actual_cost, s.actual_currency`

const sendFrom = ` FROM sends s LEFT JOIN verifications v ON v.id = s.verification_id`

// scanSend reads a row of sendCols and opens its address.
func (s *Store) scanSend(row pgx.Row, now time.Time) (history.SendRow, error) {
	var (
		r               history.SendRow
		status, vStatus string
		expires         time.Time
		attempts, why   []byte
		deliveredAt     *time.Time
	)
	err := row.Scan(&r.ID, &r.VerificationID, &r.Time, &r.Phone, &r.ClientIP, &status, &r.Reason,
		&r.Provider, &r.ProviderMessageID, &r.Error, &r.Updated, &vStatus, &expires, &r.Delivery, &r.DeliveryError, &r.AppID, &r.Shadow,
		&r.Channel, &r.Country, &r.Encoding, &r.Segments, &attempts, &deliveredAt, &why, &r.Test, &r.Cost, &r.Currency,
		&r.ActualCost, &r.ActualCurrency)
	if err != nil {
		return history.SendRow{}, err
	}
	if r.Phone, err = s.openAddress(r.Phone); err != nil {
		return history.SendRow{}, err
	}
	if r.Fraud, err = parseFraud(why); err != nil {
		return history.SendRow{}, err
	}
	if r.Attempts, err = parseAttempts(attempts); err != nil {
		return history.SendRow{}, err
	}
	if deliveredAt != nil {
		r.DeliveredAt = deliveredAt.UTC()
	}
	r.Time, r.Updated = r.Time.UTC(), r.Updated.UTC()
	r.SendStatus = otp.SendStatus(status)
	r.Status = history.StatusOf(r.SendStatus, otp.Status(vStatus), expires, now)
	return r, nil
}

// ListSends implements history.Store. Every filter and the cursor are
// conditions on one of the (…, created_at, id) indexes, so a page is an index range scan.
func (s *Store) ListSends(ctx context.Context, f history.SendFilter) ([]history.SendRow, *history.SendCursor, error) {
	now := s.Now()
	q, args, err := listQuery(f, now, s.addressIndex)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: list sends: %w", err)
	}
	// An unnamed statement is planned for its own values every time: a cached
	// generic plan cannot tell a pumped phone with 100,000 sends from a phone with
	// two, and would read all of them.
	rows, err := s.pool.Query(ctx, q, append([]any{pgx.QueryExecModeExec}, args...)...)
	if err != nil {
		return nil, nil, wrap("list sends", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.SendRow, error) { return s.scanSend(r, now) })
	if err != nil {
		return nil, nil, wrap("list sends", err)
	}
	out, next := f.Page(out)
	return out, next, nil
}

// listQuery builds the query of one page: one row more than the page, to tell
// whether another page follows. A filter by phone compares index(phone) with the stored index.
func listQuery(f history.SendFilter, now time.Time, index func(string) string) (string, []any, error) {
	if err := f.Validate(); err != nil {
		return "", nil, err
	}
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.AppID != "" {
		where = append(where, "s.app_id = "+arg(f.AppID)+"::uuid")
	}
	if f.Phone != "" {
		where = append(where, "s.phone = "+arg(index(f.Phone))+"::text")
	}
	if f.ClientIP != "" {
		where = append(where, "s.client_ip = "+arg(f.ClientIP)+"::text")
	}
	if !f.From.IsZero() {
		where = append(where, "s.created_at >= "+arg(ceilMicro(f.From))+"::timestamptz")
	}
	if !f.To.IsZero() {
		where = append(where, "s.created_at < "+arg(ceilMicro(f.To))+"::timestamptz")
	}
	if c := f.After; c != nil {
		where = append(where, "(s.created_at, s.id) < ("+arg(c.Time)+"::timestamptz, "+arg(c.ID)+"::uuid)")
	}
	if f.Status != "" {
		where = append(where, statusCond(f.Status, func() string { return arg(now.Truncate(time.Microsecond)) + "::timestamptz" }))
	}
	q := `SELECT ` + sendCols + sendFrom
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " ORDER BY s.created_at DESC, s.id DESC LIMIT " + strconv.Itoa(f.PageLimit()+1), args, nil
}

// ceilMicro rounds t up to the microseconds Postgres keeps, so that comparing
// stored times with it gives the same answer as comparing with t.
func ceilMicro(t time.Time) time.Time {
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		return r.Add(time.Microsecond)
	}
	return t
}

// statusCond is the condition for one SendFilter.Status; it matches exactly the
// rows history.StatusOf labels that way. now adds the clock as an argument.
func statusCond(status string, now func() string) string {
	const outcome = `s.status IN ('sent', 'sending', 'unknown') AND `
	// otp.Verification.StatusAt in SQL: a pending verification past its expiry is expired.
	expired := func() string {
		return `(v.status = 'expired' OR (v.status = 'pending' AND v.expires_at <= ` + now() + `))`
	}
	switch status {
	case history.StatusApproved:
		return outcome + `v.status = 'approved'`
	case history.StatusExpired:
		return outcome + expired()
	case history.StatusSent, history.StatusSending, history.StatusUnknown:
		return `s.status = '` + status + `' AND coalesce(v.status, '') <> 'approved' AND NOT coalesce(` + expired() + `, false)`
	}
	return `s.status = '` + status + `'` // failed, blocked, duplicate: checked by SendFilter.Validate
}

// Send implements history.Store.
func (s *Store) Send(ctx context.Context, id string) (history.SendRow, error) {
	if !validID(id) {
		return history.SendRow{}, fmt.Errorf("postgres: send: %w", otp.ErrNotFound)
	}
	r, err := s.scanSend(s.pool.QueryRow(ctx, `SELECT `+sendCols+sendFrom+` WHERE s.id = $1`, id), s.Now())
	if errors.Is(err, pgx.ErrNoRows) {
		err = otp.ErrNotFound
	}
	return r, wrap("send", err)
}

// VerificationDetail implements history.Store, reading all three parts from one snapshot.
func (s *Store) VerificationDetail(ctx context.Context, id string) (history.VerificationDetail, error) {
	if !validID(id) {
		return history.VerificationDetail{}, fmt.Errorf("postgres: verification detail: %w", otp.ErrNotFound)
	}
	now := s.Now()
	var d history.VerificationDetail
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		v, err := s.scanVerification(tx.QueryRow(ctx, `SELECT `+verificationCols+` FROM verifications WHERE id = $1`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		v.CodeHashes, v.Status = nil, v.StatusAt(now)
		d.Verification = v
		rows, _ := tx.Query(ctx, `SELECT `+sendCols+sendFrom+` WHERE s.verification_id = $1 ORDER BY s.created_at, s.id`, id)
		d.Sends, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.SendRow, error) { return s.scanSend(r, now) })
		if err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT id, verification_id, outcome, client_ip, created_at FROM attempts
			WHERE verification_id = $1 ORDER BY created_at, id`, id)
		d.Attempts, err = pgx.CollectRows(rows, scanAttempt)
		return err
	})
	if err != nil {
		return history.VerificationDetail{}, wrap("verification detail", err)
	}
	return d, nil
}

func scanAttempt(row pgx.CollectableRow) (history.Attempt, error) {
	var (
		a       history.Attempt
		outcome string
	)
	if err := row.Scan(&a.ID, &a.VerificationID, &outcome, &a.ClientIP, &a.Time); err != nil {
		return history.Attempt{}, err
	}
	a.Outcome, a.Time = otp.CheckOutcome(outcome), a.Time.UTC()
	return a, nil
}

// fraudJSON is a fraud explanation as sends.fraud and fraud_blocks.why keep it, the shape
// of send.blocked's "fraud" field; nil (NULL) for none.
func fraudJSON(e *rate.FraudExplanation) any {
	if e == nil {
		return nil
	}
	b, err := json.Marshal(events.NewFraudData(e))
	if err != nil {
		return nil // a struct of strings and numbers always marshals
	}
	return b
}

// parseFraud reads what fraudJSON wrote; nil for NULL.
func parseFraud(b []byte) (*rate.FraudExplanation, error) {
	if b == nil {
		return nil, nil
	}
	var d events.FraudData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("fraud explanation: %w", err)
	}
	return d.Explanation(), nil
}
