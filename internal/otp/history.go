package otp

import (
	"context"
	"slices"
	"time"
)

// HistoryStore answers the admin console's questions about past sends and checks.
// Implementations: internal/postgres and internal/inmem.
type HistoryStore interface {
	// ListSends returns sends newest first, by (Time, ID), and the position after the
	// last of them when another page follows (nil on the last page). Errors:
	// *ErrInvalidRequest from SendFilter.Validate.
	ListSends(ctx context.Context, f SendFilter) (rows []SendRow, next *SendCursor, err error)
	// Send returns one send by id. Errors: ErrNotFound.
	Send(ctx context.Context, id string) (SendRow, error)
	// VerificationDetail returns a verification with its sends and attempts, oldest
	// first, and without its code hashes; its Status is StatusAt the store's clock.
	// Errors: ErrNotFound.
	VerificationDetail(ctx context.Context, id string) (VerificationDetail, error)
	// Stats counts sends, blocks and approvals per bucket, from the bucket holding since
	// up to the one holding now, with empty buckets included (Blocked is never nil).
	// Buckets start at whole multiples of bucket since the Unix epoch. Errors:
	// *ErrInvalidRequest naming "bucket" for a bucket shorter than a minute or not of
	// whole seconds, and naming "since" for a since in a later bucket than now's or a
	// range of more than MaxStatBuckets buckets. A non-empty appID counts only that app's.
	Stats(ctx context.Context, since time.Time, bucket time.Duration, appID string) ([]StatBucket, error)
	// RecordAdminAction appends to the audit log; a zero Time means now.
	// Errors: *ErrInvalidRequest from AdminAction.Validate.
	RecordAdminAction(ctx context.Context, a AdminAction) error
	// AdminActions returns the newest audit entries first, at most AdminActionLimit(limit).
	AdminActions(ctx context.Context, limit int) ([]AdminAction, error)
	DeliveryRater
}

// Outcomes of sends in history, also the values SendFilter.Status accepts. Approved
// and expired name a send whose verification ended that way; the others are the
// send's own status.
const (
	HistorySending   = "sending"
	HistorySent      = "sent"
	HistoryFailed    = "failed"
	HistoryBlocked   = "blocked"
	HistoryDuplicate = "duplicate"
	HistoryApproved  = "approved"
	HistoryExpired   = "expired"
	// HistoryUnknown: a send whose outcome was never recorded (SendUnknown).
	HistoryUnknown = "unknown"
)

// HistoryStatuses lists the values SendFilter.Status accepts besides "", in the
// order the console offers them.
func HistoryStatuses() []string {
	return []string{HistorySent, HistorySending, HistoryFailed, HistoryBlocked, HistoryDuplicate, HistoryApproved, HistoryExpired, HistoryUnknown}
}

// ValidHistoryStatus reports whether s is a status SendFilter accepts ("" included).
func ValidHistoryStatus(s string) bool {
	return s == "" || slices.Contains(HistoryStatuses(), s)
}

// StatusAt is the verification's status as of now: a pending verification past its
// expiry is expired, though it stays pending in storage until a send or check closes it.
// It is the one statement of that rule; stores that filter on it in their own query
// language test theirs against this (internal/storetest).
func (v Verification) StatusAt(now time.Time) Status {
	if v.Status == StatusPending && !now.Before(v.ExpiresAt) {
		return StatusExpired
	}
	return v.Status
}

// HistoryStatus is a send's outcome in history: the verification's outcome wins over a
// sent (or still sending, or unknown) send's own status, so support sees how it ended —
// an approval also proves that an unknown send's code arrived. The verification's status
// is taken as of now (see Verification.StatusAt).
func HistoryStatus(send SendStatus, v Status, expiresAt, now time.Time) string {
	switch send {
	case SendSent, SendSending, SendUnknown:
		switch (Verification{Status: v, ExpiresAt: expiresAt}).StatusAt(now) {
		case StatusApproved:
			return HistoryApproved
		case StatusExpired:
			return HistoryExpired
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
	Attempts []ProviderAttempt
	// Status is the send's outcome, from HistoryStatus, such as "approved" or "blocked".
	Status string
	// SendStatus is the row's own state.
	SendStatus SendStatus
	// Reason is the refusing rule of a blocked or duplicate send, such as "phone 1/1m".
	Reason string
	// Shadow names what shadow fraud rules would have refused, such as "prefix 10/1h:shadow".
	Shadow            string
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
	Outcome        CheckOutcome
	ClientIP       string
	Time           time.Time
}

// VerificationDetail is one verification with everything that happened to it.
type VerificationDetail struct {
	// Verification has no CodeHashes.
	Verification Verification
	Sends        []SendRow
	Attempts     []Attempt
}
