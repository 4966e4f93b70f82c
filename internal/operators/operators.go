// Package operators owns the people who run otpgate: operator accounts, their roles
// (viewer, operator, admin), their personal admin API tokens, and who a request of the
// admin listener comes from (Principal). Accounts and tokens are kept through its own
// Store; every change is audited in history's log in the same transaction. It imports
// the domain and history only.
package operators

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"otpgate/internal/otp"
)

// Role is what an operator may do. Roles are ordered: each may do what the ones below it may.
type Role string

// Roles, lowest first.
const (
	// RoleViewer reads history, charts, limits, apps, fraud settings and the audit log.
	RoleViewer Role = "viewer"
	// RoleOperator also lifts fraud blocks, resets limits and redelivers events.
	RoleOperator Role = "operator"
	// RoleAdmin also changes settings, apps, keys, webhooks, test numbers and operators.
	RoleAdmin Role = "admin"
)

// Roles lists every role, lowest first.
func Roles() []Role { return []Role{RoleViewer, RoleOperator, RoleAdmin} }

// rank orders the roles; an unknown role ranks below every known one.
func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether a holder of r may do what needs the role need.
func (r Role) Allows(need Role) bool { return r.Valid() && r.rank() >= need.rank() }

// ParseRole reads a role's name, in any letter case.
func ParseRole(s string) (Role, bool) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	return r, r.Valid()
}

// Operator is one person's account.
type Operator struct {
	// ID names the account (a UUID).
	ID string
	// Email is the address the person signs in with, lower-cased; unique.
	Email string
	// Subject is the identity provider's "sub" of the person, once they signed in with
	// single sign-on; unique when set.
	Subject string
	// Name is shown in the console and the audit log.
	Name string
	Role Role
	// RoleFromConsole records that an admin assigned the role in the console or the API:
	// the identity provider's claims no longer change it at sign-in.
	RoleFromConsole bool
	// Disabled accounts sign in with nothing: no session, no token.
	Disabled  bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// LastSeenAt is when the account last signed in or used a token, to the minute; zero if never.
	LastSeenAt time.Time
	// SignedInAt is when the account last signed in with single sign-on; zero if never.
	// A role that came from the identity provider's claims is only as fresh as this.
	SignedInAt time.Time
	// SessionEpoch counts the times the account's console sessions were ended (a sign-out):
	// a session holds the epoch it began in and is void once the account's has moved on.
	// Only Store.EndSessions changes it.
	SessionEpoch int64
}

// ErrLastAdmin is what a store answers a change, made with keepAnAdmin, that would leave
// no active admin. Someone must be able to manage accounts without the break-glass token.
var ErrLastAdmin = errors.New("the last active admin cannot be disabled or demoted")

// ActiveAdmin reports whether the account is an admin that may sign in.
func (o Operator) ActiveAdmin() bool { return o.Role == RoleAdmin && !o.Disabled }

// Limits of an operator's fields.
const (
	maxEmail = 254
	maxName  = 100
)

// NormalizeEmail lower-cases an address and checks that it is one plain address.
func NormalizeEmail(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || len(s) > maxEmail {
		return "", false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return "", false
	}
	return s, true
}

// Validate checks an operator before it is stored. Errors: *otp.ErrInvalidRequest naming the fields.
func (o Operator) Validate() error {
	bad := map[string]string{}
	if e, ok := NormalizeEmail(o.Email); !ok || e != o.Email {
		bad["email"] = "must be one email address, such as alice@example.com"
	}
	if !oneLine(o.Name, maxName) {
		bad["name"] = fmt.Sprintf("must be one line of at most %d characters", maxName)
	}
	if !o.Role.Valid() {
		bad["role"] = "must be viewer, operator or admin"
	}
	if len(bad) > 0 {
		return &otp.ErrInvalidRequest{Fields: bad}
	}
	return nil
}

// oneLine reports whether s is valid UTF-8 of at most n characters without control characters.
func oneLine(s string, n int) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > n {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// RoleFromClaims reports whether the account's role follows the identity provider's
// claims (an account single sign-on created) rather than an admin's choice.
func (o Operator) RoleFromClaims() bool { return !o.RoleFromConsole && o.Subject != "" }

// Label names the operator for people: the name and the address, or the address alone.
func (o Operator) Label() string {
	if o.Name == "" {
		return o.Email
	}
	return o.Name + " <" + o.Email + ">"
}
