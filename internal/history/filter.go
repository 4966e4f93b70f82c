package history

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/otp"
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

// SendFilter selects sends for ListSends; zero fields do not filter.
type SendFilter struct {
	AppID    string // exact
	Phone    string // E.164, exact
	ClientIP string // exact
	Status   string // one of the History* values
	From     time.Time
	To       time.Time // exclusive
	Limit    int
	// After is the next position of the previous page; nil starts at the newest send.
	After *SendCursor
}

// SendCursor is a position in the newest-first send history: the page after it starts
// with the first send older than (Time, ID).
type SendCursor struct {
	Time time.Time
	ID   string
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

// Validate checks Status and After, the filter fields a store cannot use as given.
// Errors: *otp.ErrInvalidRequest naming "status" and "cursor".
func (f SendFilter) Validate() error {
	fields := map[string]string{}
	if !ValidStatus(f.Status) {
		fields["status"] = "must be one of " + strings.Join(Statuses(), ", ")
	}
	if f.AppID != "" {
		if _, ok := otp.CanonAppID(f.AppID); !ok || f.AppID == otp.DefaultAppAlias {
			fields["app"] = "names no app"
		}
	}
	if f.After != nil {
		if _, err := uuid.Parse(f.After.ID); err != nil || len(f.After.ID) != 36 {
			fields["cursor"] = "names no send"
		}
	}
	if len(fields) > 0 {
		return &otp.ErrInvalidRequest{Fields: fields}
	}
	return nil
}

// Page cuts rows, newest first and fetched with at least one row more than the page
// when another page follows, to the filter's page, and returns the next page's
// position (nil on the last page).
func (f SendFilter) Page(rows []SendRow) (page []SendRow, next *SendCursor) {
	return pageRows(rows, f.PageLimit())
}

// pageRows cuts rows, fetched with one more than limit when another page follows, to limit.
func pageRows(rows []SendRow, limit int) (page []SendRow, next *SendCursor) {
	if len(rows) <= limit {
		return rows, nil
	}
	last := rows[limit-1]
	return rows[:limit], &SendCursor{Time: last.Time, ID: last.ID}
}
