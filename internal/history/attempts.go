package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/otp"
)

// Verification attempts: every send of a verification (a message handed to its
// providers, whatever became of it); refused sends are none. An attempt is converted when
// its verification was approved and the send went out (StatusOf labels it approved).

// MaxAttemptPrefix is the longest AttemptFilter.Prefix, the "+" and six digits of a number
// that the hourly rollups keep, so that a summary counts the same after the purge.
const MaxAttemptPrefix = 7

// AttemptFilter selects verification attempts; zero fields do not filter.
type AttemptFilter struct {
	AppID          string
	VerificationID string
	// Address is the E.164 number or email address, exact.
	Address string
	// Country is an ISO 3166 alpha-2 code; Channel one of otp.Channels.
	Country, Channel string
	// Prefix selects numbers that start with it: "+" and one to six digits.
	Prefix string
	// Converted, when set, selects converted (true) or unconverted attempts.
	Converted *bool
	From      time.Time
	To        time.Time // exclusive
	// Limit and After page a list, as SendFilter's do; a summary ignores them.
	Limit int
	After *SendCursor
}

// PageLimit is the page size the filter asks for, within 1..MaxAttemptLimit.
func (f AttemptFilter) PageLimit() int {
	switch {
	case f.Limit <= 0:
		return DefaultListLimit
	case f.Limit > MaxAttemptLimit:
		return MaxAttemptLimit
	}
	return f.Limit
}

// MaxAttemptLimit caps AttemptFilter.Limit, as Twilio caps a page.
const MaxAttemptLimit = 1000

// Validate checks the fields a store cannot use as given. Errors: *otp.ErrInvalidRequest
// naming "app", "verification", "country", "channel", "prefix" and "cursor".
func (f AttemptFilter) Validate() error {
	fields := map[string]string{}
	if _, ok := otp.CanonAppID(f.AppID); f.AppID != "" && (!ok || f.AppID == otp.DefaultAppAlias) {
		fields["app"] = "names no app"
	}
	if _, err := uuid.Parse(f.VerificationID); f.VerificationID != "" && (err != nil || len(f.VerificationID) != 36) {
		fields["verification"] = "names no verification"
	}
	if c := f.Country; c != "" && (len(c) != 2 || strings.Trim(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "") {
		fields["country"] = "must be an ISO 3166 alpha-2 code in capitals, such as JP"
	}
	if f.Channel != "" && !slices.Contains(otp.Channels(), f.Channel) {
		fields["channel"] = "must be one of " + strings.Join(otp.Channels(), ", ")
	}
	if p := f.Prefix; p != "" && (len(p) < 2 || len(p) > MaxAttemptPrefix || p[0] != '+' || strings.Trim(p[1:], "0123456789") != "") {
		fields["prefix"] = fmt.Sprintf("must be + and 1 to %d digits", MaxAttemptPrefix-1)
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

// ValidateSummary is Validate for a summary, which moreover refuses the filters the hourly
// rollups cannot answer. Errors: *otp.ErrInvalidRequest, also naming "address" and
// "verification".
func (f AttemptFilter) ValidateSummary() error {
	fields := map[string]string{}
	var invalid *otp.ErrInvalidRequest
	if err := f.Validate(); errors.As(err, &invalid) {
		fields = invalid.Fields
	}
	if f.Address != "" {
		fields["address"] = "is no filter of a summary"
	}
	if f.VerificationID != "" {
		fields["verification"] = "is no filter of a summary"
	}
	if len(fields) > 0 {
		return &otp.ErrInvalidRequest{Fields: fields}
	}
	return nil
}

// Page cuts attempts fetched with one more than the page, as SendFilter.Page does.
func (f AttemptFilter) Page(rows []SendRow) (page []SendRow, next *SendCursor) {
	return pageRows(rows, f.PageLimit())
}

// Matches reports whether the attempt r (a send with a verification, labelled by
// StatusOf) is one the filter selects, besides its page; for stores that filter in Go.
func (f AttemptFilter) Matches(r SendRow) bool {
	switch {
	case r.VerificationID == "",
		f.AppID != "" && r.AppID != f.AppID,
		f.VerificationID != "" && r.VerificationID != f.VerificationID,
		f.Address != "" && r.Phone != f.Address,
		f.Country != "" && r.Country != f.Country,
		f.Channel != "" && r.Channel != f.Channel,
		f.Prefix != "" && !strings.HasPrefix(r.Phone, f.Prefix),
		f.Converted != nil && Converted(r) != *f.Converted,
		!f.From.IsZero() && r.Time.Before(f.From),
		!f.To.IsZero() && !r.Time.Before(f.To):
		return false
	}
	return true
}

// Converted reports whether an attempt converted: its verification was approved.
func Converted(r SendRow) bool { return r.Status == StatusApproved }

// AttemptsSummary counts the attempts a filter selects.
type AttemptsSummary struct {
	Attempts  int64
	Converted int64
}

// AttemptReader answers Twilio's Verification Attempts; both stores implement it.
type AttemptReader interface {
	// VerificationAttempts returns the attempts f selects, newest first by (Time, ID), and
	// the position after the last of them when another page follows (nil on the last
	// page). Errors: *otp.ErrInvalidRequest from AttemptFilter.Validate.
	VerificationAttempts(ctx context.Context, f AttemptFilter) ([]SendRow, *SendCursor, error)
	// AttemptsSummary counts the attempts f selects (its page aside): the raw rows from
	// the rolled-up boundary on and, before it, the hourly rollups, whose hours count whole.
	// Errors: *otp.ErrInvalidRequest from AttemptFilter.ValidateSummary.
	AttemptsSummary(ctx context.Context, f AttemptFilter) (AttemptsSummary, error)
}
