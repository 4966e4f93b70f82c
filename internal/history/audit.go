package history

import (
	"time"

	"otpgate/internal/otp"
)

// AdminAction is one entry of the admin audit log.
type AdminAction struct {
	ID     int64
	Action string // such as "limit_reset"
	Target string // such as "phone:+819012345678"
	Detail string
	Time   time.Time
}

// Audit log actions.
const (
	// ActionLimitReset is a reset of a phone's or an IP's limits from the console or the API.
	ActionLimitReset = "limit_reset"
)

// Validate checks an entry before it is recorded. Errors: *otp.ErrInvalidRequest naming
// "action", *otp.ErrInvalidText for text no store can keep.
func (a AdminAction) Validate() error {
	if a.Action == "" {
		return &otp.ErrInvalidRequest{Fields: map[string]string{"action": "required"}}
	}
	return otp.CheckTextIn("audit", a)
}

// AdminActionLimit is how many entries AdminActions returns for limit: MaxListLimit
// when limit is not within 1..MaxListLimit.
func AdminActionLimit(limit int) int {
	if limit <= 0 || limit > MaxListLimit {
		return MaxListLimit
	}
	return limit
}
