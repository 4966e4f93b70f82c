// Package history owns the record of past sends and checks as the admin console reads it:
// the Store interface both stores implement, its rows (SendRow, Attempt,
// VerificationDetail), filters and cursors, stats buckets and their counter, delivery
// rates, the audit log (AdminAction), and the admin service (Admin) that answers the
// console with them and resets a phone's or an IP's limits, audited. It imports the
// domain (internal/otp) for the vocabulary of verifications; the domain knows nothing of it.
package history

import (
	"context"
	"slices"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Store answers the admin console's questions about past sends and checks.
// Implementations: internal/postgres and internal/inmem.
type Store interface {
	// ListSends returns sends newest first, by (Time, ID), and the position after the
	// last of them when another page follows (nil on the last page). Errors:
	// *otp.ErrInvalidRequest from SendFilter.Validate.
	ListSends(ctx context.Context, f SendFilter) (rows []SendRow, next *SendCursor, err error)
	// Send returns one send by id. Errors: otp.ErrNotFound.
	Send(ctx context.Context, id string) (SendRow, error)
	// VerificationDetail returns a verification with its sends and attempts, oldest
	// first, and without its code hashes; its Status is StatusAt the store's clock.
	// Errors: otp.ErrNotFound.
	VerificationDetail(ctx context.Context, id string) (VerificationDetail, error)
	// Stats counts sends, blocks and approvals per bucket, from the bucket holding since
	// up to the one holding now, with empty buckets included (Blocked is never nil).
	// Buckets start at whole multiples of bucket since the Unix epoch. Errors:
	// *otp.ErrInvalidRequest naming "bucket" for a bucket shorter than a minute or not of
	// whole seconds, and naming "since" for a since in a later bucket than now's or a
	// range of more than MaxStatBuckets buckets. A non-empty appID counts only that app's.
	Stats(ctx context.Context, since time.Time, bucket time.Duration, appID string) ([]StatBucket, error)
	// RecordAdminAction appends to the audit log; a zero Time means now.
	// Errors: *otp.ErrInvalidRequest from AdminAction.Validate.
	RecordAdminAction(ctx context.Context, a AdminAction) error
	// AdminActions returns the newest audit entries first, at most AdminActionLimit(limit).
	AdminActions(ctx context.Context, limit int) ([]AdminAction, error)
	// AuditLog returns the entries that pass f, newest first, at most AdminActionLimit(f.Limit).
	AuditLog(ctx context.Context, f AuditFilter) ([]AdminAction, error)
	DeliveryRater
	AttemptReader
}

// Outcomes of sends in history, also the values SendFilter.Status accepts. Approved
// and expired name a send whose verification ended that way; the others are the
// send's own status.
const (
	StatusSending   = "sending"
	StatusSent      = "sent"
	StatusFailed    = "failed"
	StatusBlocked   = "blocked"
	StatusDuplicate = "duplicate"
	StatusApproved  = "approved"
	StatusExpired   = "expired"
	// StatusUnknown: a send whose outcome was never recorded (otp.SendUnknown).
	StatusUnknown = "unknown"
)

// Statuses lists the values SendFilter.Status accepts besides "", in the
// order the console offers them.
func Statuses() []string {
	return []string{StatusSent, StatusSending, StatusFailed, StatusBlocked, StatusDuplicate, StatusApproved, StatusExpired, StatusUnknown}
}

// ValidStatus reports whether s is a status SendFilter accepts ("" included).
func ValidStatus(s string) bool {
	return s == "" || slices.Contains(Statuses(), s)
}

// StatusOf is a send's outcome in history: the verification's outcome wins over a
// sent (or still sending, or unknown) send's own status, so support sees how it ended —
// an approval also proves that an unknown send's code arrived. The verification's status
// is taken as of now (see otp.Verification.StatusAt).
func StatusOf(send otp.SendStatus, v otp.Status, expiresAt, now time.Time) string {
	switch send {
	case otp.SendSent, otp.SendSending, otp.SendUnknown:
		switch (otp.Verification{Status: v, ExpiresAt: expiresAt}).StatusAt(now) {
		case otp.StatusApproved:
			return StatusApproved
		case otp.StatusExpired:
			return StatusExpired
		}
	}
	return string(send)
}

// SendRow is one send in history. It never holds a code or code hash.
type SendRow struct {
	ID    string
	AppID string
	// VerificationID is empty for blocked and duplicate sends.
	VerificationID string
	Time           time.Time
	// Phone is the address: the E.164 number, or for the email channel the email address.
	Phone    string
	ClientIP string
	// Channel is sms, whatsapp, voice or email.
	Channel string
	// Country is the number's ISO 3166 region; empty for email and refused sends.
	Country string
	// Encoding (EncodingGSM7 or EncodingUCS2) and Segments describe an SMS; empty and 0
	// for other channels.
	Encoding string
	Segments int
	// Attempts are the provider attempts of the send, in order.
	Attempts []otp.ProviderAttempt
	// Status is the send's outcome, from StatusOf, such as "approved" or "blocked".
	Status string
	// SendStatus is the row's own state.
	SendStatus otp.SendStatus
	// Reason is the refusing rule of a blocked or duplicate send, such as "phone 1/1m".
	Reason string
	// Shadow names what shadow fraud rules would have refused, such as "prefix 10/1h:shadow".
	Shadow string
	// Fraud says why the fraud guard refused, challenged, passed or flagged the send; nil
	// when it had no part in it.
	Fraud *rate.FraudExplanation
	// Test marks a send to a test number of its app: nothing went out.
	Test bool
	// Cost is the send's estimated cost in micro-units of Currency; 0 for refused sends,
	// test numbers and sends no price applied to.
	Cost     int64
	Currency string
	// ActualCost is what the provider reported the send cost, in micro-units of
	// ActualCurrency (its own, which may differ from Currency); ActualCurrency is empty
	// while no receipt reported a price.
	ActualCost        int64
	ActualCurrency    string
	Provider          string
	ProviderMessageID string
	Error             string
	// Updated is when the row last changed, such as when the provider answered.
	Updated time.Time
	// Delivery is what a receipt reported, DeliveryDelivered or DeliveryUndelivered;
	// empty while none came. DeliveryError is the provider's reason for undelivered.
	Delivery      string
	DeliveryError string
	// DeliveredAt is when the receipt came; zero without one.
	DeliveredAt time.Time
}

// Attempt is one check of a code, as recorded in history.
type Attempt struct {
	ID             int64
	VerificationID string
	Outcome        otp.CheckOutcome
	ClientIP       string
	Time           time.Time
}

// VerificationDetail is one verification with everything that happened to it.
type VerificationDetail struct {
	// Verification has no CodeHashes.
	Verification otp.Verification
	Sends        []SendRow
	Attempts     []Attempt
}
