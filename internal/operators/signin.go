package operators

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// ErrNoAccess refuses a single sign-on: the person has no account that may sign in and
// their claims map to no role (or the account is disabled, or belongs to another subject).
var ErrNoAccess = otp.Errorf(otp.CodeForbidden, "this identity may not use the console")

// ErrLoginUsed refuses a single sign-on's callback whose state came back before: a sign-in
// is finished once, so a copied login cookie and state cannot be replayed with a fresh code.
var ErrLoginUsed = otp.Errorf(otp.CodeUnauthorized, "this sign-in was finished already")

// Identity is what the identity provider says about a person who signed in.
type Identity struct {
	// Subject is the provider's stable id of the person ("sub").
	Subject string
	Email   string
	// EmailVerified is true only when the provider vouched for the address (the
	// email_verified claim is the boolean true), or the operator chose to trust a
	// provider that never sends the claim.
	EmailVerified bool
	Name          string
	// Claims are the values of the role claim (such as the person's groups).
	Claims []string
}

// RoleMap turns the values of the identity provider's role claim into a role.
type RoleMap struct {
	// Values maps a claim value to the role it grants; the highest granted role wins.
	Values map[string]Role
	// Default is the role of a person none of whose values is mapped; "" lets them in
	// only when an admin created their account or assigned their role in the console.
	Default Role
}

// ParseRoleMap reads OTP_OIDC_ROLES, such as "otp-admins=admin,otp-ops=operator".
func ParseRoleMap(s string) (map[string]Role, error) {
	out := map[string]Role{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		value, role, ok := strings.Cut(part, "=")
		r, valid := ParseRole(role)
		value = strings.TrimSpace(value)
		if !ok || value == "" || !valid {
			return nil, fmt.Errorf("%q: want <claim value>=viewer|operator|admin", part)
		}
		out[value] = r
	}
	return out, nil
}

// RoleFor returns the role the claim values grant; ok is false when they grant none and
// there is no default.
func (m RoleMap) RoleFor(values []string) (Role, bool) {
	best := Role("")
	for _, v := range values {
		if r, ok := m.Values[v]; ok && r.rank() > best.rank() {
			best = r
		}
	}
	if best == "" {
		best = m.Default
	}
	return best, best.Valid()
}

// SignIn finds or creates the account of a person the identity provider vouched for and
// returns their principal. An account is found by subject, else by email (an account an
// admin created before the person's first sign-in, whose subject it then records); a
// person with neither gets an account with the role their claims map to. The claims set
// the role at every sign-in unless an admin assigned it in the console, which then wins.
// Errors: ErrNoAccess, or ones wrapping otp.ErrUnavailable.
func (a *Admin) SignIn(ctx context.Context, id Identity, roles RoleMap) (Principal, error) {
	email, ok := NormalizeEmail(id.Email)
	if id.Subject == "" || !ok {
		return Principal{}, fmt.Errorf("%w: the identity provider gave no subject or no email address", ErrNoAccess)
	}
	if !id.EmailVerified {
		// The address names the account and is how a pre-created account is found, so
		// an address the provider does not vouch for signs in to nothing: anyone who can
		// register at a shared provider could otherwise claim an operator's address.
		return Principal{}, fmt.Errorf("%w: the identity provider does not say that %s is verified", ErrNoAccess, email)
	}
	claimed, mapped := roles.RoleFor(id.Claims)
	now := a.Now().Truncate(time.Microsecond)
	o, err := a.store.OperatorBySubject(ctx, id.Subject)
	if errors.Is(err, otp.ErrNotFound) {
		o, err = a.store.OperatorByEmail(ctx, email)
		if err == nil && o.Subject != "" {
			// The address belongs to another identity.
			return Principal{}, fmt.Errorf("%w: the account of %s is bound to another identity", ErrNoAccess, email)
		}
	}
	switch {
	case errors.Is(err, otp.ErrNotFound):
		if !mapped {
			return Principal{}, fmt.Errorf("%w: no role claimed", ErrNoAccess)
		}
		o = Operator{ID: a.NewID(), Email: email, Subject: id.Subject, Name: clip(id.Name), Role: claimed, CreatedAt: now, UpdatedAt: now}
		if err := o.Validate(); err != nil {
			return Principal{}, fmt.Errorf("%w: %w", ErrNoAccess, err)
		}
		act := audit(ActionOperatorSignIn, o.ID, "created at first sign-in", "single sign-on", "", describe(o))
		act.ActorKind, act.Actor, act.ActorID = history.ActorSystem, "single sign-on", o.ID
		if err := a.store.CreateOperator(ctx, o, act); err != nil {
			return Principal{}, fmt.Errorf("operators: sign in: %w", err)
		}
		if err := a.store.TouchOperator(ctx, o.ID, "", now); err != nil {
			return Principal{}, fmt.Errorf("operators: sign in: %w", err)
		}
		o.LastSeenAt, o.SignedInAt = now, now
	case err != nil:
		return Principal{}, fmt.Errorf("operators: sign in: %w", err)
	default:
		if o.Disabled {
			return Principal{}, fmt.Errorf("%w: the account is disabled", ErrNoAccess)
		}
		next := o
		next.Subject = id.Subject
		if !o.RoleFromConsole {
			if !mapped {
				return Principal{}, a.dropAccess(ctx, o, now)
			}
			next.Role = claimed
		}
		if next.Name == "" {
			next.Name = clip(id.Name)
		}
		if next != o {
			next.UpdatedAt = now
			act := audit(ActionOperatorSignIn, o.ID, "changed at sign-in", "single sign-on", describe(o), describe(next))
			act.ActorKind, act.Actor, act.ActorID = history.ActorSystem, "single sign-on", o.ID
			if err := a.store.UpdateOperator(ctx, next, false, act); err != nil {
				return Principal{}, fmt.Errorf("operators: sign in: %w", err)
			}
			o = next
		}
		if err := a.store.TouchOperator(ctx, o.ID, "", now); err != nil {
			return Principal{}, fmt.Errorf("operators: sign in: %w", err)
		}
		o.LastSeenAt, o.SignedInAt = now, now
	}
	return Principal{Kind: KindSession, Role: o.Role, Operator: o}, nil
}

// dropAccess answers the sign-in of an account whose role follows the claims when the
// claims no longer map to any role: the provider has taken the person's access away, so
// the account is disabled and lowered to viewer (an admin who enables it again gives back
// a viewer, until a sign-in maps a role), and its console sessions are ended; its
// personal tokens authenticate nothing from now on. It returns the refusal to give.
func (a *Admin) dropAccess(ctx context.Context, o Operator, now time.Time) error {
	next := o
	next.Disabled, next.Role, next.UpdatedAt = true, RoleViewer, now
	act := audit(ActionOperatorSignIn, o.ID, "disabled at sign-in: the identity provider's claims map to no role", "single sign-on", describe(o), describe(next))
	act.ActorKind, act.Actor, act.ActorID = history.ActorSystem, "single sign-on", o.ID
	if err := a.store.UpdateOperator(ctx, next, false, act); err != nil {
		return fmt.Errorf("operators: sign in: %w", err)
	}
	if err := a.store.EndSessions(ctx, o.ID); err != nil {
		return fmt.Errorf("operators: sign in: %w", err)
	}
	return fmt.Errorf("%w: no role claimed; the account is disabled", ErrNoAccess)
}

// UseLogin marks a sign-in's state as used; it lasts until expires. Only a hash of the
// state is kept. Errors: ErrLoginUsed when it was used before, or ones wrapping
// otp.ErrUnavailable.
func (a *Admin) UseLogin(ctx context.Context, state string, expires time.Time) error {
	sum := sha256.Sum256([]byte(state))
	err := a.store.UseLoginState(ctx, sum[:], expires, a.Now())
	if err != nil && !errors.Is(err, ErrLoginUsed) {
		return fmt.Errorf("operators: use login state: %w", err)
	}
	return err
}

// clip keeps a provider's display name within an account's limits.
func clip(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(name))
	if r := []rune(name); len(r) > maxName {
		name = string(r[:maxName])
	}
	return name
}
