package admin

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/history"
)

// badCursor is what is wrong with a cursor that encodeCursor did not make.
const badCursor = "malformed cursor; use next_cursor of the previous page"

// encodeCursor writes a history position opaquely for URLs and the API's next_cursor:
// base64url of "<unix microseconds>.<send id>". It is "" for no position (the last page).
func encodeCursor(c *history.SendCursor) string {
	if c == nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Time.UnixMicro(), 10) + "." + c.ID))
}

// parseCursor reads a cursor made by encodeCursor; "" is no position.
// Errors: *otp.ErrInvalidRequest naming "cursor".
func parseCursor(s string) (*history.SendCursor, error) {
	if s == "" {
		return nil, nil
	}
	bad := invalidRequest("", map[string]string{"cursor": badCursor})
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok || id == "" {
		return nil, bad
	}
	n, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return nil, bad
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, bad
	}
	return &history.SendCursor{Time: time.UnixMicro(n).UTC(), ID: u.String()}, nil
}

// statusLabel is a send's status for people: its outcome, and for a blocked send the
// refusing rule, such as "blocked:phone 1/1m".
func statusLabel(r history.SendRow) string {
	if r.Status == history.StatusBlocked && r.Reason != "" {
		return r.Status + ":" + r.Reason
	}
	return r.Status
}
