package otp

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// HistoryStore answers the admin console's questions about past sends and checks.
// Implementations: internal/postgres and internal/inmem.
type HistoryStore interface {
	// ListSends returns sends newest first, by (Time, ID), and the cursor of the next
	// page ("" on the last page). Errors: *ErrInvalidRequest from SendFilter.Validate.
	ListSends(ctx context.Context, f SendFilter) (rows []SendRow, next string, err error)
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
	// range of more than MaxStatBuckets buckets.
	Stats(ctx context.Context, since time.Time, bucket time.Duration) ([]StatBucket, error)
	// RecordAdminAction appends to the audit log; a zero Time means now.
	// Errors: *ErrInvalidRequest from AdminAction.Validate.
	RecordAdminAction(ctx context.Context, a AdminAction) error
	// AdminActions returns the newest audit entries first, at most AdminActionLimit(limit).
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

// HistoryStatuses lists the values SendFilter.Status accepts besides "", in the
// order the console offers them.
func HistoryStatuses() []string {
	return []string{HistorySent, HistorySending, HistoryFailed, HistoryBlocked, HistoryDuplicate, HistoryApproved, HistoryExpired}
}

// ValidHistoryStatus reports whether s is a status SendFilter accepts ("" included).
func ValidHistoryStatus(s string) bool {
	return s == "" || slices.Contains(HistoryStatuses(), s)
}

// StatusAt is the verification's status as of now: a pending verification past its
// expiry is expired, though it stays pending in storage until a send or check closes it.
func (v Verification) StatusAt(now time.Time) Status {
	if v.Status == StatusPending && !now.Before(v.ExpiresAt) {
		return StatusExpired
	}
	return v.Status
}

// HistoryStatus labels a send for history: the verification's outcome wins over a
// sent (or still sending) send's own status, so support sees how it ended. The
// verification's status is taken as of now (see Verification.StatusAt).
func HistoryStatus(send SendStatus, reason string, v Status, expiresAt, now time.Time) string {
	switch send {
	case SendSent, SendSending:
		switch (Verification{Status: v, ExpiresAt: expiresAt}).StatusAt(now) {
		case StatusApproved:
			return HistoryApproved
		case StatusExpired:
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

// Validate checks Status and Cursor, the filter fields a store cannot use as given,
// and returns the decoded cursor (zero without one).
// Errors: *ErrInvalidRequest naming "status" and "cursor".
func (f SendFilter) Validate() (SendCursor, error) {
	fields := map[string]string{}
	if !ValidHistoryStatus(f.Status) {
		fields["status"] = "must be one of " + strings.Join(HistoryStatuses(), ", ")
	}
	var c SendCursor
	if f.Cursor != "" {
		var err error
		if c, err = ParseSendCursor(f.Cursor); err != nil {
			fields["cursor"] = badCursor
		}
	}
	if len(fields) > 0 {
		return SendCursor{}, &ErrInvalidRequest{Fields: fields}
	}
	return c, nil
}

// Page cuts rows, newest first and fetched with at least one row more than the page
// when another page follows, to the filter's page, and returns the next page's cursor
// ("" on the last page).
func (f SendFilter) Page(rows []SendRow) (page []SendRow, next string) {
	limit := f.PageLimit()
	if len(rows) <= limit {
		return rows, ""
	}
	last := rows[limit-1]
	return rows[:limit], SendCursor{Time: last.Time, ID: last.ID}.String()
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

// Validate checks an entry before it is recorded. Errors: *ErrInvalidRequest naming "action".
func (a AdminAction) Validate() error {
	if a.Action == "" {
		return &ErrInvalidRequest{Fields: map[string]string{"action": "required"}}
	}
	return nil
}

// AdminActionLimit is how many entries AdminActions returns for limit: MaxListLimit
// when limit is not within 1..MaxListLimit.
func AdminActionLimit(limit int) int {
	if limit <= 0 || limit > MaxListLimit {
		return MaxListLimit
	}
	return limit
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

// badCursor is what is wrong with a cursor that SendCursor.String did not make.
const badCursor = "malformed cursor; use next_cursor of the previous page"

// ParseSendCursor decodes a cursor made by SendCursor.String. Errors: *ErrInvalidRequest.
func ParseSendCursor(s string) (SendCursor, error) {
	bad := &ErrInvalidRequest{Fields: map[string]string{"cursor": badCursor}}
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

// StatCounter sums history into the buckets of one Stats answer, so that every
// store sorts and counts alike; a store only feeds it its rows.
type StatCounter struct {
	start   time.Time
	bucket  time.Duration
	buckets []StatBucket
}

// NewStatCounter checks the range with StatRange and returns a counter holding every
// bucket from the one holding since to the one holding now, empty.
// Errors: *ErrInvalidRequest, as StatRange.
func NewStatCounter(since, now time.Time, bucket time.Duration) (*StatCounter, error) {
	start, n, err := StatRange(since, now, bucket)
	if err != nil {
		return nil, err
	}
	c := &StatCounter{start: start, bucket: bucket, buckets: make([]StatBucket, n)}
	for i := range c.buckets {
		c.buckets[i] = StatBucket{Start: start.Add(time.Duration(i) * bucket), Blocked: map[string]int{}}
	}
	return c, nil
}

// Range is the time the buckets cover: [from, to).
func (c *StatCounter) Range() (from, to time.Time) {
	return c.start, c.start.Add(time.Duration(len(c.buckets)) * c.bucket)
}

// at is the bucket holding t, or nil outside the range.
func (c *StatCounter) at(t time.Time) *StatBucket {
	if t.Before(c.start) {
		return nil
	}
	if i := int(BucketStart(t, c.bucket).Sub(c.start) / c.bucket); i < len(c.buckets) {
		return &c.buckets[i]
	}
	return nil
}

// AddSends counts n sends of one status and reason made at t; a time outside the
// range is not counted.
func (c *StatCounter) AddSends(t time.Time, status SendStatus, reason string, n int) {
	b := c.at(t)
	if b == nil {
		return
	}
	switch status {
	case SendBlocked:
		b.Blocked[reason] += n
	case SendDuplicate:
		b.Duplicates += n
	case SendFailed:
		b.Failed += n
		b.Sends += n
	default:
		b.Sends += n
	}
}

// AddApprovals counts n approved checks made at t; a time outside the range is not counted.
func (c *StatCounter) AddApprovals(t time.Time, n int) {
	if b := c.at(t); b != nil {
		b.Approvals += n
	}
}

// AddBucket adds the counts of a finer bucket, such as an hour into its day; the
// finer bucket must lie inside one of c's, as it does when c's bucket is a multiple of it.
func (c *StatCounter) AddBucket(from StatBucket) {
	b := c.at(from.Start)
	if b == nil {
		return
	}
	b.Sends += from.Sends
	b.Failed += from.Failed
	b.Duplicates += from.Duplicates
	b.Approvals += from.Approvals
	for reason, n := range from.Blocked {
		b.Blocked[reason] += n
	}
}

// Buckets returns the counts, oldest first, with their approval ratios; call it last.
func (c *StatCounter) Buckets() []StatBucket {
	for i := range c.buckets {
		if b := &c.buckets[i]; b.Sends > 0 {
			b.ApprovalRatio = float64(b.Approvals) / float64(b.Sends)
		}
	}
	return c.buckets
}
