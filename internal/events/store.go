package events

import (
	"context"
	"time"

	"otpgate/internal/history"
)

// Store keeps endpoints and the outbox. Implementations: internal/postgres and
// internal/inmem. Event rows are written by the stores' own writes of the changes they
// report (a send, a check, a refused send, a fraud block); Store is what reads and settles
// them.
type Store interface {
	// CreateEndpoint stores e and the audit entry a in one step.
	CreateEndpoint(ctx context.Context, e Endpoint, a history.AdminAction) error
	// Endpoints lists the endpoints of an app, oldest first.
	Endpoints(ctx context.Context, appID string) ([]Endpoint, error)
	// Endpoint returns one endpoint of an app. Errors: otp.ErrNotFound.
	Endpoint(ctx context.Context, appID, id string) (Endpoint, error)
	// DeleteEndpoint removes an endpoint of an app with its undelivered events, and writes
	// a. Errors: otp.ErrNotFound.
	DeleteEndpoint(ctx context.Context, appID, id string, a history.AdminAction) error

	// ClaimEvents claims at most limit due events, each the earliest undelivered one of its
	// subject at its endpoint, for lease: a claimed event is claimable again once the lease
	// ran out without a settlement, so an instance that dies mid-delivery loses nothing.
	// Claiming counts an attempt.
	ClaimEvents(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]Claim, error)
	// SettleEvents records how the claimed deliveries went. A settlement of a claim that
	// is no longer current (the lease ran out and another claim was made) is ignored,
	// except that a delivery is always recorded.
	SettleEvents(ctx context.Context, results []Result) error
	// OldestPending returns when the oldest undelivered, unparked event was written; ok is
	// false when there is none.
	OldestPending(ctx context.Context) (at time.Time, ok bool, err error)

	// Deliveries lists an endpoint's deliveries, newest first. Errors: otp.ErrNotFound for
	// an unknown endpoint.
	Deliveries(ctx context.Context, appID, endpointID string, f DeliveryFilter) ([]Delivery, error)
	// Redeliver makes a delivered or parked event of the endpoint due again at now, with a
	// fresh retry window, and writes a. A pending one is left as it is. Errors:
	// otp.ErrNotFound.
	Redeliver(ctx context.Context, appID, endpointID, eventID string, now time.Time, a history.AdminAction) (Delivery, error)
	// RecordAdminAction writes an audit entry of its own, for an action that changes
	// nothing stored (a test-send).
	RecordAdminAction(ctx context.Context, a history.AdminAction) error

	// ExpireVerifications closes at most limit pending verifications whose expiry is not
	// after now as expired, writing verification.expired for each in the same step, and
	// says how many it closed.
	ExpireVerifications(ctx context.Context, now time.Time, limit int) (int, error)
	// EndFraudBlocks writes fraud.block_ended for at most limit blocks that ran out by now
	// (and were not lifted), marking them reported in the same step, and says how many.
	EndFraudBlocks(ctx context.Context, now time.Time, limit int) (int, error)
}

// Claim is one claimed delivery: an event and the endpoint it goes to.
type Claim struct {
	// DeliveryID names the (event, endpoint) row; Attempt is this claim's attempt number.
	DeliveryID int64
	Attempt    int
	Event      Event
	EndpointID string
	URL        string
	// SecretSealed is the endpoint's sealed secret.
	SecretSealed []byte
	// WindowStart is when its retry window began: the event's creation, or its redelivery.
	WindowStart time.Time
}

// Result is how one claimed delivery went.
type Result struct {
	DeliveryID int64
	Attempt    int
	At         time.Time
	// Outcome is Delivered, Pending (retry at Next) or Parked.
	Outcome string
	Next    time.Time
	// HTTPStatus is the receiver's status code, 0 when it gave none.
	HTTPStatus int
	Error      string
}

// Delivery statuses.
const (
	Pending   = "pending"
	Delivered = "delivered"
	Parked    = "parked"
)

// Delivery is one event's delivery to one endpoint, as the console shows it.
type Delivery struct {
	Event      Event
	EndpointID string
	Status     string
	Attempts   int
	// NextAttemptAt is when a pending delivery is tried next.
	NextAttemptAt time.Time
	// LastAttemptAt is zero before the first attempt.
	LastAttemptAt time.Time
	LastStatus    int
	LastError     string
	DeliveredAt   time.Time
}

// DeliveryFilter narrows Deliveries.
type DeliveryFilter struct {
	// Status is one of Pending, Delivered, Parked, or "" for all.
	Status string
	// Limit caps the rows; 0 means DefaultDeliveries.
	Limit int
}

// Limits of a deliveries list.
const (
	DefaultDeliveries = 50
	MaxDeliveries     = 500
)
