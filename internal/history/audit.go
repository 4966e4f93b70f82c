package history

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"otpgate/internal/otp"
)

// AdminAction is one entry of the admin audit log. The audit log is never purged by
// retention: it is the record of who changed what, kept as long as the database.
type AdminAction struct {
	ID     int64
	Action string // such as "limit_reset"
	Target string // such as "phone:+819012345678"
	Detail string
	Time   time.Time
	// Who made the change: see Actor. Stores fill these from the call's context (Stamp)
	// when the service left them empty.
	ActorKind string
	Actor     string
	ActorID   string
	TokenID   string
	ClientIP  string
	// Before and After are what changed, as the service describes it (JSON where it
	// can); empty when there was nothing before (a creation) or after (a deletion).
	Before string
	After  string
}

// Kinds of actor.
const (
	// ActorBreakGlass is the shared ADMIN_TOKEN.
	ActorBreakGlass = "break-glass"
	// ActorSession is an operator signed in to the console with single sign-on.
	ActorSession = "session"
	// ActorToken is an operator's personal admin API token.
	ActorToken = "token"
	// ActorAppKey is an app's API key (or the account credential) on the Twilio compatible API.
	ActorAppKey = "app_key"
	// ActorSystem is otpgate itself: the fraud guard, a single sign-on creating an account.
	ActorSystem = "system"
)

// Actor is who makes an admin change, carried in the call's context from the
// listener's authentication to the store's one insert, so no service can forget it.
type Actor struct {
	// Kind is one of the Actor* kinds.
	Kind string
	// Name is who, for people: an operator's email, "break-glass", an app key's id.
	Name string
	// ID is the operator's id, or the key's id.
	ID string
	// TokenID names the personal token the call came with.
	TokenID  string
	ClientIP string
}

type actorKey struct{}

// WithActor returns ctx carrying who makes the changes of the call.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries.
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// Stamp fills the entry's actor from ctx unless the service named one; an entry with
// neither is made by the system (the fraud guard starting a block).
func (a AdminAction) Stamp(ctx context.Context) AdminAction {
	if a.ActorKind != "" {
		return a
	}
	act, ok := ActorFrom(ctx)
	if !ok {
		a.ActorKind = ActorSystem
		return a
	}
	a.ActorKind, a.Actor, a.ActorID, a.TokenID, a.ClientIP = act.Kind, act.Name, act.ID, act.TokenID, act.ClientIP
	return a
}

// Audit log actions.
const (
	// ActionLimitReset is a reset of a phone's or an IP's limits from the console or the API.
	ActionLimitReset = "limit_reset"
)

// Change is v as an entry's Before or After: compact JSON, or "" for nil (nothing before
// a creation, nothing after a deletion). v is a small struct or map the service builds
// for the log, never the stored row itself, so that no secret, hash or code reaches the
// log by a field added later; phone numbers in it are masked (pii.Mask).
func Change(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		// The values are plain structs and maps of text and numbers; a failure here is a
		// programming mistake, and the log still says what was meant.
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return string(b)
}

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

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	// Actor matches the actor's name, id or kind exactly (an email, an operator's id,
	// "break-glass").
	Actor string
	// Action matches the action exactly, such as "app_update".
	Action string
	// From and To bound the time: From inclusive, To exclusive.
	From, To time.Time
	// BeforeID pages back: only entries with a smaller id.
	BeforeID int64
	// Limit is at most MaxListLimit; AdminActionLimit applies.
	Limit int
}

// Matches reports whether an entry passes the filter but its limit and paging; the
// in-memory store filters with it, and it documents what the SQL does.
func (f AuditFilter) Matches(a AdminAction) bool {
	switch {
	case f.Actor != "" && f.Actor != a.Actor && f.Actor != a.ActorID && f.Actor != a.ActorKind:
		return false
	case f.Action != "" && f.Action != a.Action:
		return false
	case !f.From.IsZero() && a.Time.Before(f.From):
		return false
	case !f.To.IsZero() && !a.Time.Before(f.To):
		return false
	case f.BeforeID != 0 && a.ID >= f.BeforeID:
		return false
	}
	return true
}
