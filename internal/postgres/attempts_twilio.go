package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/history"
)

var _ history.AttemptReader = (*Store)(nil)

// convertedSQL is history.Converted in SQL: a send that went out, of an approved
// verification (v is the send's verification).
const convertedSQL = `(s.status IN ('sent', 'sending', 'unknown') AND coalesce(v.status, '') = 'approved')`

// attemptConds are the conditions of f on sends s and their verifications v, with its
// arguments numbered after args; the cursor and the address are left to the caller.
func attemptConds(f history.AttemptFilter, args []any) ([]string, []any) {
	where := []string{"s.verification_id IS NOT NULL"}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.AppID != "" {
		where = append(where, "s.app_id = "+arg(f.AppID)+"::uuid")
	}
	if f.VerificationID != "" {
		where = append(where, "s.verification_id = "+arg(f.VerificationID)+"::uuid")
	}
	if f.Country != "" {
		where = append(where, "s.country = "+arg(f.Country)+"::text")
	}
	if f.Channel != "" {
		where = append(where, "s.channel = "+arg(f.Channel)+"::text")
	}
	if f.Prefix != "" {
		// Validate allows "+" and digits only: no LIKE wildcard. The stored prefix (the
		// number without its last digits) is what a prefix filter can compare with.
		where = append(where, storedPrefixSQL("s.phone_prefix")+" LIKE "+arg(f.Prefix+"%")+"::text")
	}
	if f.Converted != nil {
		c := convertedSQL
		if !*f.Converted {
			c = "NOT " + c
		}
		where = append(where, c)
	}
	if !f.From.IsZero() {
		where = append(where, "s.created_at >= "+arg(ceilMicro(f.From))+"::timestamptz")
	}
	if !f.To.IsZero() {
		where = append(where, "s.created_at < "+arg(ceilMicro(f.To))+"::timestamptz")
	}
	return where, args
}

// VerificationAttempts implements history.AttemptReader: a range of one of the sends'
// (…, created_at, id) indexes, as ListSends is.
func (s *Store) VerificationAttempts(ctx context.Context, f history.AttemptFilter) ([]history.SendRow, *history.SendCursor, error) {
	if err := f.Validate(); err != nil {
		return nil, nil, fmt.Errorf("postgres: verification attempts: %w", err)
	}
	now := s.Now()
	where, args := attemptConds(f, nil)
	if f.Address != "" {
		args = append(args, s.addressIndex(f.Address))
		where = append(where, "s.phone = $"+strconv.Itoa(len(args))+"::text")
	}
	if c := f.After; c != nil {
		args = append(args, c.Time, c.ID)
		where = append(where, "(s.created_at, s.id) < ($"+strconv.Itoa(len(args)-1)+"::timestamptz, $"+strconv.Itoa(len(args))+"::uuid)")
	}
	q := `SELECT ` + sendCols + sendFrom + ` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY s.created_at DESC, s.id DESC LIMIT ` + strconv.Itoa(f.PageLimit()+1)
	rows, err := s.pool.Query(ctx, q, append([]any{pgx.QueryExecModeExec}, args...)...)
	if err != nil {
		return nil, nil, wrap("verification attempts", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.SendRow, error) { return s.scanSend(r, now) })
	if err != nil {
		return nil, nil, wrap("verification attempts", err)
	}
	out, next := f.Page(out)
	return out, next, nil
}

// AttemptsSummary implements history.AttemptReader: the raw sends from the rolled-up
// boundary on and the hourly rollups before it, in one statement's snapshot.
func (s *Store) AttemptsSummary(ctx context.Context, f history.AttemptFilter) (history.AttemptsSummary, error) {
	var sum history.AttemptsSummary
	if err := f.ValidateSummary(); err != nil {
		return sum, fmt.Errorf("postgres: attempts summary: %w", err)
	}
	where, args := attemptConds(f, nil)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	rolled := []string{"hour < (" + rolledBeforeSQL + ")"}
	if f.AppID != "" {
		rolled = append(rolled, "app_id = "+arg(f.AppID)+"::uuid")
	}
	if f.Country != "" {
		rolled = append(rolled, "country = "+arg(f.Country)+"::text")
	}
	if f.Channel != "" {
		rolled = append(rolled, "channel = "+arg(f.Channel)+"::text")
	}
	if f.Prefix != "" {
		rolled = append(rolled, "prefix LIKE "+arg(f.Prefix+"%")+"::text")
	}
	if f.Converted != nil {
		rolled = append(rolled, "converted = "+arg(*f.Converted)+"::boolean")
	}
	// A rolled-up hour counts whole: the hour holding From counts once it is rolled up.
	if !f.From.IsZero() {
		rolled = append(rolled, "hour > "+arg(f.From)+"::timestamptz - interval '1 hour'")
	}
	if !f.To.IsZero() {
		rolled = append(rolled, "hour < "+arg(f.To)+"::timestamptz")
	}
	q := `SELECT coalesce(sum(n), 0)::bigint, coalesce(sum(n) FILTER (WHERE converted), 0)::bigint FROM (
			SELECT count(*) AS n, ` + convertedSQL + ` AS converted` + sendFrom + `
			WHERE ` + strings.Join(where, " AND ") + ` AND s.created_at >= (` + rolledBeforeSQL + `)
			GROUP BY 2
			UNION ALL
			SELECT n, converted FROM attempts_hourly WHERE ` + strings.Join(rolled, " AND ") + `
		) c`
	err := s.pool.QueryRow(ctx, q, append([]any{pgx.QueryExecModeExec}, args...)...).Scan(&sum.Attempts, &sum.Converted)
	if err != nil {
		return history.AttemptsSummary{}, wrap("attempts summary", err)
	}
	return sum, nil
}
