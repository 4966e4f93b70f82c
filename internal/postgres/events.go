package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

var _ events.Store = (*Store)(nil)

// endpointCols are read by scanEndpoint, in this order.
const endpointCols = `id, app_id, url, secret_sealed, event_types, created_at`

func scanEndpoint(r pgx.CollectableRow) (events.Endpoint, error) {
	var e events.Endpoint
	err := r.Scan(&e.ID, &e.AppID, &e.URL, &e.SecretSealed, &e.Types, &e.CreatedAt)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err
}

// CreateEndpoint implements events.Store.
func (s *Store) CreateEndpoint(ctx context.Context, e events.Endpoint, a history.AdminAction) error {
	e.AppID = otp.StoredAppID(e.AppID)
	if !validID(e.ID) || !validID(e.AppID) {
		return fmt.Errorf("postgres: create endpoint: %w: ids must be uuids", errBug)
	}
	if err := errors.Join(otp.CheckTextIn("endpoint", e), a.Validate()); err != nil {
		return fmt.Errorf("postgres: create endpoint: %w", err)
	}
	return s.inTx(ctx, "create endpoint", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			e.ID, e.AppID, e.URL, e.SecretSealed, e.Types, e.CreatedAt); err != nil {
			return err
		}
		return s.auditTx(ctx, tx, a)
	})
}

// Endpoints implements events.Store.
func (s *Store) Endpoints(ctx context.Context, appID string) ([]events.Endpoint, error) {
	appID = otp.StoredAppID(appID)
	if !validID(appID) {
		return []events.Endpoint{}, nil
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE app_id = $1 ORDER BY created_at, id`, appID)
	out, err := pgx.CollectRows(rows, scanEndpoint)
	if err != nil {
		return nil, wrap("endpoints", err)
	}
	return out, nil
}

// Endpoint implements events.Store.
func (s *Store) Endpoint(ctx context.Context, appID, id string) (events.Endpoint, error) {
	appID = otp.StoredAppID(appID)
	if !validID(appID) || !validID(id) {
		return events.Endpoint{}, fmt.Errorf("postgres: endpoint: %w", otp.ErrNotFound)
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = $1 AND app_id = $2`, id, appID)
	e, err := pgx.CollectExactlyOneRow(rows, scanEndpoint)
	if errors.Is(err, pgx.ErrNoRows) {
		err = otp.ErrNotFound
	}
	return e, wrap("endpoint", err)
}

// DeleteEndpoint implements events.Store; its outbox rows go with it (ON DELETE CASCADE).
func (s *Store) DeleteEndpoint(ctx context.Context, appID, id string, a history.AdminAction) error {
	appID = otp.StoredAppID(appID)
	if !validID(appID) || !validID(id) {
		return fmt.Errorf("postgres: delete endpoint: %w", otp.ErrNotFound)
	}
	return s.inTx(ctx, "delete endpoint", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND app_id = $2`, id, appID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return otp.ErrNotFound
		}
		return s.auditTx(ctx, tx, a)
	})
}

// ClaimEvents implements events.Store in one short statement: it locks the due rows that
// no pending row before them (by rank, then id) of the same subject and endpoint holds up,
// skipping rows another instance is claiming, and moves them past the lease. An event that
// closes a verification also waits while a send of it has no outcome yet: the outcome
// writer writes verification.sent up to a batch later than the send, and the sweeper
// settles a lost outcome.
func (s *Store) ClaimEvents(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]events.Claim, error) {
	rows, _ := s.pool.Query(ctx, `WITH c AS (
			SELECT o.id FROM event_outbox o
			WHERE o.status = 'pending' AND o.next_attempt_at <= $1
				AND (o.subject IS NULL OR NOT EXISTS (
					SELECT 1 FROM event_outbox p
					WHERE p.endpoint_id = o.endpoint_id AND p.subject = o.subject AND p.status = 'pending'
						AND (p.rank < o.rank OR (p.rank = o.rank AND p.id < o.id))))
				AND NOT (o.type IN ('verification.approved', 'verification.expired', 'verification.failed') AND EXISTS (
					SELECT 1 FROM sends s WHERE s.verification_id = o.subject AND s.status = 'sending'))
			ORDER BY o.next_attempt_at, o.id
			LIMIT $2
			FOR UPDATE OF o SKIP LOCKED
		)
		UPDATE event_outbox o SET attempts = o.attempts + 1, next_attempt_at = $3, last_attempt_at = $1
		FROM c, webhook_endpoints w
		WHERE o.id = c.id AND w.id = o.endpoint_id
		RETURNING o.id, o.attempts, o.event_id, o.type, o.created_at, o.data, o.endpoint_id, w.url, w.secret_sealed,
			coalesce(o.redelivered_at, o.created_at)`, now, limit, now.Add(lease))
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (events.Claim, error) {
		var c events.Claim
		err := r.Scan(&c.DeliveryID, &c.Attempt, &c.Event.ID, &c.Event.Type, &c.Event.CreatedAt, &c.Event.Data,
			&c.EndpointID, &c.URL, &c.SecretSealed, &c.WindowStart)
		c.Event.CreatedAt, c.WindowStart = c.Event.CreatedAt.UTC(), c.WindowStart.UTC()
		if err == nil {
			c.Event.Data, err = s.openEventData(c.Event.Data)
		}
		return c, err
	})
	if err != nil {
		return nil, wrap("claim events", err)
	}
	return out, nil
}

// SettleEvents implements events.Store in one statement.
func (s *Store) SettleEvents(ctx context.Context, results []events.Result) error {
	if len(results) == 0 {
		return nil
	}
	n := len(results)
	ids, attempts, outcomes, ats, nexts := make([]int64, n), make([]int32, n), make([]string, n), make([]time.Time, n), make([]time.Time, n)
	statuses, errs := make([]int32, n), make([]string, n)
	for i, r := range results {
		ids[i], attempts[i], outcomes[i], ats[i], statuses[i], errs[i] = r.DeliveryID, int32(r.Attempt), r.Outcome, r.At, int32(r.HTTPStatus), r.Error
		nexts[i] = r.Next
		if r.Next.IsZero() {
			nexts[i] = r.At
		}
	}
	// The events of a subject held up behind one that waits for its retry wait as long: so
	// the claims, which walk the due rows in order, do not walk past them meanwhile (an
	// endpoint that is down for a day holds a day of them).
	_, err := s.pool.Exec(ctx, `WITH o AS (
			UPDATE event_outbox o SET status = r.outcome,
				delivered_at = CASE WHEN r.outcome = 'delivered' THEN r.at END,
				next_attempt_at = CASE WHEN r.outcome = 'pending' THEN r.next ELSE o.next_attempt_at END,
				last_attempt_at = r.at, last_status = r.http_status, last_error = r.error
			FROM unnest($1::bigint[], $2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::int[], $7::text[])
				AS r(id, attempt, outcome, at, next, http_status, error)
			WHERE o.id = r.id AND o.status = 'pending' AND (o.attempts = r.attempt OR r.outcome = 'delivered')
			RETURNING o.id, o.endpoint_id, o.subject, o.status, o.next_attempt_at
		)
		UPDATE event_outbox l SET next_attempt_at = o.next_attempt_at FROM o
		WHERE o.status = 'pending' AND o.subject IS NOT NULL
			AND l.endpoint_id = o.endpoint_id AND l.subject = o.subject AND l.status = 'pending'
			AND l.id <> o.id AND l.next_attempt_at < o.next_attempt_at`,
		ids, attempts, outcomes, ats, nexts, statuses, errs)
	return wrap("settle events", err)
}

// OldestPending implements events.Store.
func (s *Store) OldestPending(ctx context.Context) (time.Time, bool, error) {
	var at *time.Time
	if err := s.pool.QueryRow(ctx, `SELECT created_at FROM event_outbox WHERE status = 'pending'
		ORDER BY created_at LIMIT 1`).Scan(&at); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, wrap("oldest pending event", err)
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return at.UTC(), true, nil
}

// deliveryCols are read by scanDelivery, in this order.
const deliveryCols = `o.event_id, o.type, o.created_at, o.data, o.endpoint_id, o.status, o.attempts,
	o.next_attempt_at, o.last_attempt_at, o.last_status, o.last_error, o.delivered_at`

// scanDelivery reads a row of deliveryCols and opens the address its event names.
func (s *Store) scanDelivery(r pgx.CollectableRow) (events.Delivery, error) {
	var (
		d              events.Delivery
		data           []byte
		last, delivery *time.Time
	)
	err := r.Scan(&d.Event.ID, &d.Event.Type, &d.Event.CreatedAt, &data, &d.EndpointID, &d.Status, &d.Attempts,
		&d.NextAttemptAt, &last, &d.LastStatus, &d.LastError, &delivery)
	if err == nil {
		data, err = s.openEventData(data)
	}
	d.Event.Data = json.RawMessage(data)
	d.Event.CreatedAt, d.NextAttemptAt = d.Event.CreatedAt.UTC(), d.NextAttemptAt.UTC()
	if last != nil {
		d.LastAttemptAt = last.UTC()
	}
	if delivery != nil {
		d.DeliveredAt = delivery.UTC()
	}
	return d, err
}

// Deliveries implements events.Store.
func (s *Store) Deliveries(ctx context.Context, appID, endpointID string, f events.DeliveryFilter) ([]events.Delivery, error) {
	if _, err := s.Endpoint(ctx, appID, endpointID); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 || limit > events.MaxDeliveries {
		limit = events.DefaultDeliveries
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+deliveryCols+` FROM event_outbox o
		WHERE o.endpoint_id = $1 AND ($2 = '' OR o.status = $2) ORDER BY o.id DESC LIMIT $3`, endpointID, f.Status, limit)
	out, err := pgx.CollectRows(rows, s.scanDelivery)
	if err != nil {
		return nil, wrap("deliveries", err)
	}
	return out, nil
}

// Redeliver implements events.Store.
func (s *Store) Redeliver(ctx context.Context, appID, endpointID, eventID string, now time.Time, a history.AdminAction) (events.Delivery, error) {
	appID = otp.StoredAppID(appID)
	if !validID(appID) || !validID(endpointID) || !validID(eventID) {
		return events.Delivery{}, fmt.Errorf("postgres: redeliver: %w", otp.ErrNotFound)
	}
	var d events.Delivery
	err := s.inTx(ctx, "redeliver", func(tx pgx.Tx) error {
		// What it was, for the audit's Before; the row is locked until the update.
		var was string
		var wasAttempts int
		err := tx.QueryRow(ctx, `SELECT o.status, o.attempts FROM event_outbox o JOIN webhook_endpoints w ON o.endpoint_id = w.id
			WHERE w.id = $2 AND w.app_id = $1 AND o.event_id = $3 FOR UPDATE OF o`, appID, endpointID, eventID).Scan(&was, &wasAttempts)
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `UPDATE event_outbox o SET
				status = 'pending', delivered_at = NULL, attempts = CASE WHEN o.status = 'pending' THEN o.attempts ELSE 0 END,
				next_attempt_at = CASE WHEN o.status = 'pending' THEN o.next_attempt_at ELSE $4 END,
				redelivered_at = CASE WHEN o.status = 'pending' THEN o.redelivered_at ELSE $4 END
			FROM webhook_endpoints w
			WHERE o.endpoint_id = w.id AND w.id = $2 AND w.app_id = $1 AND o.event_id = $3
			RETURNING `+deliveryCols, appID, endpointID, eventID, now)
		d, err = pgx.CollectExactlyOneRow(rows, s.scanDelivery)
		if errors.Is(err, pgx.ErrNoRows) {
			return otp.ErrNotFound
		}
		if err != nil {
			return err
		}
		return s.auditTx(ctx, tx, events.AuditRedeliver(a, was, wasAttempts, d))
	})
	return d, err
}
