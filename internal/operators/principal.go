package operators

import (
	"context"
	"fmt"
)

// Kind says how a request proved who it comes from.
type Kind string

// Kinds of Principal.
const (
	// KindBreakGlass is the shared ADMIN_TOKEN: always an admin, audited as "break-glass".
	KindBreakGlass Kind = "break-glass"
	// KindSession is an operator signed in to the console with single sign-on.
	KindSession Kind = "session"
	// KindToken is an operator's personal admin API token.
	KindToken Kind = "token"
)

// Principal is who an admin request comes from and what they may do.
type Principal struct {
	Kind Kind
	Role Role
	// Operator is the account, for sessions and tokens; zero for break-glass.
	Operator Operator
	// TokenID names the personal token, for KindToken.
	TokenID string
}

// BreakGlass is the principal of ADMIN_TOKEN.
func BreakGlass() Principal { return Principal{Kind: KindBreakGlass, Role: RoleAdmin} }

// Allows reports whether the principal may do what needs the role need.
func (p Principal) Allows(need Role) bool { return p.Role.Allows(need) }

// String names the principal for the audit log and the console, such as
// `operator "alice@example.com" (token OT…)` or "break-glass".
func (p Principal) String() string {
	switch p.Kind {
	case KindBreakGlass:
		return "break-glass"
	case KindToken:
		return fmt.Sprintf("operator %q (token %s)", p.Operator.Email, p.TokenID)
	case KindSession:
		return fmt.Sprintf("operator %q", p.Operator.Email)
	}
	return "nobody"
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p, for the handlers behind authentication.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// PrincipalFrom returns the principal ctx carries; ok is false when there is none.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
