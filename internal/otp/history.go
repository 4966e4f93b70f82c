package otp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// HistoryStore answers the admin console's questions about past sends and checks.
// Implementations: internal/postgres and internal/inmem.
type HistoryStore interface {
	// ListSends returns sends newest first, by (Time, ID), and the cursor of the next
	// page ("" on the last page). Errors: *ErrInvalidRequest for a bad status or cursor.
	ListSends(ctx context.Context, f SendFilter) (rows []SendRow, next string, err error)
	// Send returns one send by id. Errors: ErrNotFound.
	Send(ctx context.Context, id string) (SendRow, error)
	// VerificationDetail returns a verification with its sends and attempts, oldest
	// first, and without its code hashes. Errors: ErrNotFound.
	VerificationDetail(ctx context.Context, id string) (VerificationDetail, error)
	// Stats counts sends, blocks and approvals per bucket, from the bucket holding since
	// up to the one holding now, with empty buckets included. Buckets start at whole
	// multiples of bucket since the Unix epoch. Errors: *ErrInvalidRequest for a bucket
	// shorter than a minute or a range of more than MaxStatBuckets buckets.
	Stats(ctx context.Context, since time.Time, bucket time.Duration) ([]StatBucket, error)
	// RecordAdminAction appends to the audit log; a zero Time means now.
	RecordAdminAction(ctx context.Context, a AdminAction) error
	// AdminActions returns the newest audit entries first, at most limit (MaxListLimit when limit <= 0).
	AdminActions(ctx context.Context, limit int) ([]AdminAction, error)
}

// Status values of history rows, also accepted by SendFilter.Status. Approved and
// expired label a send whose verification ended that way; a blocked row shows as
// "blocked:<reason>" and is filtered as "blocked".
const (
	HistorySending   = "sending"
	HistorySent      = "sent"
	HistoryFailed    = "failed"
	HistoryBlocked   = "blocked"
	HistoryDuplicate = "duplicate"
	HistoryApproved  = "approved"
	HistoryExpired   = "expired"
)

// Limits of history queries.
const (
	// DefaultListLimit is the page size when SendFilter.Limit is zero.
	DefaultListLimit = 50
	// MaxListLimit caps SendFilter.Limit; larger values are cut to it.
	MaxListLimit = 200
	// MaxStatBuckets caps how many buckets one Stats call returns.
	MaxStatBuckets = 1000
)

// ValidHistoryStatus reports whether s is a status SendFilter accepts ("" included).
func ValidHistoryStatus(s string) bool {
	switch s {
	case "", HistorySending, HistorySent, HistoryFailed, HistoryBlocked, HistoryDuplicate, HistoryApproved, HistoryExpired:
		return true
	}
	return false
}

// HistoryStatus labels a send for history: the verification's outcome wins over a
// sent (or still sending) send's own status, so support sees how it ended. A pending
// verification past its expiry counts as expired.
func HistoryStatus(send SendStatus, reason string, v Status, expiresAt, now time.Time) string {
	switch send {
	case SendSent, SendSending:
		switch {
		case v == StatusApproved:
			return HistoryApproved
		case v == StatusExpired, v == StatusPending && !now.Before(expiresAt):
			return HistoryExpired
		}
	case SendBlocked:
		if reason != "" {
			return HistoryBlocked + ":" + reason
		}
	}
	return string(send)
}

// SendFilter selects sends for ListSends; zero fields do not filter.
type SendFilter struct {
	Phone    string // E.164, exact
	ClientIP string // exact
	Status   string // one of the History* values
	From     time.Time
	To       time.Time // exclusive
	Limit    int
	// Cursor is the next value of the previous page.
	Cursor string
}

// PageLimit is the page size the filter asks for, within 1..MaxListLimit.
func (f SendFilter) PageLimit() int {
	switch {
	case f.Limit <= 0:
		return DefaultListLimit
	case f.Limit > MaxListLimit:
		return MaxListLimit
	}
	return f.Limit
}

// SendRow is one send in history. It never holds a code or code hash.
type SendRow struct {
	ID string
	// VerificationID is empty for blocked and duplicate sends.
	VerificationID string
	Time           time.Time
	Phone          string
	ClientIP       string
	// Status is the label for people, from HistoryStatus, such as "blocked:phone 1/1m".
	Status string
	// SendStatus is the row's own state.
	SendStatus SendStatus
	// Reason is the refusing rule of a blocked or duplicate send.
	Reason            string
	Provider          string
	ProviderMessageID string
	Error             string
	// Updated is when the row last changed, such as when the provider answered.
	Updated time.Time
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

// StatBucket counts what happened in [Start, Start+bucket).
type StatBucket struct {
	Start time.Time
	// Sends counts sends that were allowed (sending, sent or failed).
	Sends  int
	Failed int
	// Blocked counts blocked sends by their reason.
	Blocked    map[string]int
	Duplicates int
	// Approvals counts approved checks.
	Approvals int
	// ApprovalRatio is Approvals/Sends (0 without sends); a falling ratio hints at SMS pumping.
	ApprovalRatio float64
}

// AdminAction is one entry of the admin audit log.
type AdminAction struct {
	ID     int64
	Action string // such as "limit_reset"
	Target string // such as "phone:+819012345678"
	Detail string
	Time   time.Time
}

// SendCursor is a position in the newest-first send history.
type SendCursor struct {
	Time time.Time
	ID   string
}

// String encodes the cursor opaquely for URLs.
func (c SendCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Time.UnixMicro(), 10) + "." + c.ID))
}

// ParseSendCursor decodes a cursor made by SendCursor.String. Errors: *ErrInvalidRequest.
func ParseSendCursor(s string) (SendCursor, error) {
	bad := &ErrInvalidRequest{Fields: map[string]string{"cursor": "malformed cursor"}}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return SendCursor{}, bad
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok || id == "" {
		return SendCursor{}, bad
	}
	n, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return SendCursor{}, bad
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return SendCursor{}, bad
	}
	return SendCursor{Time: time.UnixMicro(n).UTC(), ID: u.String()}, nil
}

// StatRange checks a Stats request and returns its first bucket's start and the
// number of buckets up to the one holding now. Errors: *ErrInvalidRequest.
func StatRange(since, now time.Time, bucket time.Duration) (start time.Time, n int, err error) {
	if bucket < time.Minute || bucket%time.Second != 0 {
		return time.Time{}, 0, &ErrInvalidRequest{Fields: map[string]string{"bucket": "must be whole seconds, at least a minute"}}
	}
	start = BucketStart(since, bucket)
	n = int(BucketStart(now, bucket).Sub(start)/bucket) + 1
	if n < 1 || n > MaxStatBuckets {
		return time.Time{}, 0, &ErrInvalidRequest{Fields: map[string]string{"since": fmt.Sprintf("must lie in the last %d buckets", MaxStatBuckets)}}
	}
	return start, n, nil
}

// BucketStart is the start of the bucket holding t: a whole multiple of bucket since the Unix epoch.
func BucketStart(t time.Time, bucket time.Duration) time.Time {
	secs, b := t.Unix(), int64(bucket/time.Second)
	return time.Unix(secs-((secs%b)+b)%b, 0).UTC()
}
