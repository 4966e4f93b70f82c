package operators

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// ErrBadToken means an admin token is missing, wrong, expired or revoked, or its
// operator is disabled. It says no more, so a caller cannot probe which.
var ErrBadToken = otp.Errorf(otp.CodeUnauthorized, "admin token missing or wrong")

// touchEvery is how stale LastSeenAt and LastUsedAt may grow before a use writes them again.
const touchEvery = time.Minute

// NewOperator asks for an account.
type NewOperator struct {
	Email string
	Name  string
	Role  string
}

// Patch changes an account; nil fields stay as they are.
type Patch struct {
	Name     *string
	Role     *string
	Disabled *bool
}

// NewToken asks for a token; a zero ExpiresIn means DefaultTokenTTL.
type NewToken struct {
	Name      string
	ExpiresIn time.Duration
}

// CreatedToken is a new token with its secret, which is shown this once.
type CreatedToken struct {
	Token  Token
	Secret string
}

// Info is an account with its tokens.
type Info struct {
	Operator Operator
	Tokens   []Token
}

// AdminService is what the admin listener calls; *Admin implements it. Every change is audited.
type AdminService interface {
	// ListOperators lists every account, by email.
	ListOperators(ctx context.Context) ([]Operator, error)
	// GetOperator returns an account with its tokens. Errors: otp.ErrNotFound.
	GetOperator(ctx context.Context, id string) (Info, error)
	// CreateOperator creates an account; the role it is given counts as assigned in the
	// console. Errors: *otp.ErrInvalidRequest naming the fields.
	CreateOperator(ctx context.Context, n NewOperator, actor string) (Operator, error)
	// UpdateOperator changes an account; a role set here is kept over the identity
	// provider's claims from then on. The last active admin cannot be disabled or
	// demoted. Errors: otp.ErrNotFound, *otp.ErrInvalidRequest.
	UpdateOperator(ctx context.Context, id string, p Patch, actor string) (Operator, error)
	// CreateToken makes a personal token of an account and returns its secret once.
	// Errors: otp.ErrNotFound, *otp.ErrInvalidRequest naming name or expires_in.
	CreateToken(ctx context.Context, operatorID string, n NewToken, actor string) (CreatedToken, error)
	// RevokeToken revokes a live token of an account. Errors: otp.ErrNotFound.
	RevokeToken(ctx context.Context, operatorID, tokenID, actor string) error
	// Authenticate finds the principal of a personal token's secret. Errors: ErrBadToken,
	// or ones wrapping otp.ErrUnavailable.
	Authenticate(ctx context.Context, secret string) (Principal, error)
	// SignIn finds or creates the account of a person the identity provider vouched for;
	// see (*Admin).SignIn. Errors: ErrNoAccess, or ones wrapping otp.ErrUnavailable.
	SignIn(ctx context.Context, id Identity, roles RoleMap) (Principal, error)
	// UseLogin marks a sign-in's state as used, once. Errors: ErrLoginUsed, or ones
	// wrapping otp.ErrUnavailable.
	UseLogin(ctx context.Context, state string, expires time.Time) error
	// Session finds the principal of a signed-in operator's account, as it is now, for a
	// session that began in the account's session epoch. Errors: ErrBadToken when the
	// account is gone or disabled or the session was ended, or ones wrapping otp.ErrUnavailable.
	Session(ctx context.Context, operatorID string, epoch int64) (Principal, error)
	// EndSessions ends every console session of the account (a sign-out).
	// Errors: ones wrapping otp.ErrUnavailable.
	EndSessions(ctx context.Context, operatorID string) error
}

// Admin implements AdminService over a Store.
type Admin struct {
	store Store

	// Now is the clock of created, revoked and used times; tests replace it.
	Now func() time.Time
	// NewID makes account ids; tests replace it.
	NewID func() string
	// ClaimsRecheck (OTP_OIDC_RECHECK) is how long after its last single sign-on an
	// account whose role came from the identity provider's claims may use personal
	// tokens: the provider is asked again only at a sign-in, so this bounds how long a
	// person the provider removed keeps token access. 0 means no bound.
	ClaimsRecheck time.Duration
}

// DefaultClaimsRecheck is ClaimsRecheck when OTP_OIDC_RECHECK is not set.
const DefaultClaimsRecheck = 24 * time.Hour

var _ AdminService = (*Admin)(nil)

// NewAdmin returns the service over store.
func NewAdmin(store Store) *Admin {
	return &Admin{
		store:         store,
		Now:           func() time.Time { return time.Now().UTC() },
		NewID:         func() string { return uuid.Must(uuid.NewV7()).String() },
		ClaimsRecheck: DefaultClaimsRecheck,
	}
}

// ListOperators implements AdminService.
func (a *Admin) ListOperators(ctx context.Context) ([]Operator, error) {
	out, err := a.store.ListOperators(ctx)
	if err != nil {
		return nil, fmt.Errorf("operators: list: %w", err)
	}
	return out, nil
}

// GetOperator implements AdminService.
func (a *Admin) GetOperator(ctx context.Context, id string) (Info, error) {
	o, err := a.operator(ctx, id)
	if err != nil {
		return Info{}, err
	}
	tokens, err := a.store.OperatorTokens(ctx, o.ID)
	if err != nil {
		return Info{}, fmt.Errorf("operators: tokens: %w", err)
	}
	return Info{Operator: o, Tokens: tokens}, nil
}

// operator reads an account by a URL's id; a malformed id is simply not found.
func (a *Admin) operator(ctx context.Context, ref string) (Operator, error) {
	id, err := uuid.Parse(ref)
	if err != nil {
		return Operator{}, otp.ErrNotFound
	}
	o, err := a.store.OperatorByID(ctx, id.String())
	if err != nil {
		return Operator{}, fmt.Errorf("operators: %w", err)
	}
	return o, nil
}

// CreateOperator implements AdminService.
func (a *Admin) CreateOperator(ctx context.Context, n NewOperator, actor string) (Operator, error) {
	now := a.Now().Truncate(time.Microsecond)
	email, _ := NormalizeEmail(n.Email)
	if email == "" {
		email = n.Email // Validate names the field
	}
	role, _ := ParseRole(n.Role)
	o := Operator{
		ID: a.NewID(), Email: email, Name: strings.TrimSpace(n.Name), Role: role,
		RoleFromConsole: true, CreatedAt: now, UpdatedAt: now,
	}
	if err := o.Validate(); err != nil {
		return Operator{}, err
	}
	act := audit(ActionOperatorCreate, o.ID, describe(o), actor, "", describe(o))
	if err := a.store.CreateOperator(ctx, o, act); err != nil {
		return Operator{}, fmt.Errorf("operators: create: %w", err)
	}
	return o, nil
}

// UpdateOperator implements AdminService.
func (a *Admin) UpdateOperator(ctx context.Context, id string, p Patch, actor string) (Operator, error) {
	if p.Name == nil && p.Role == nil && p.Disabled == nil {
		return Operator{}, &otp.ErrInvalidRequest{Detail: "nothing to change", Fields: map[string]string{"name": "give name, role or disabled"}}
	}
	old, err := a.operator(ctx, id)
	if err != nil {
		return Operator{}, err
	}
	o := old
	if p.Name != nil {
		o.Name = strings.TrimSpace(*p.Name)
	}
	if p.Role != nil {
		o.Role, _ = ParseRole(*p.Role)
		if !o.Role.Valid() {
			o.Role = Role(*p.Role) // Validate names the field
		}
		o.RoleFromConsole = true
	}
	if p.Disabled != nil {
		o.Disabled = *p.Disabled
	}
	if err := o.Validate(); err != nil {
		return Operator{}, err
	}
	o.UpdatedAt = a.Now().Truncate(time.Microsecond)
	act := audit(ActionOperatorUpdate, o.ID, "changed", actor, describe(old), describe(o))
	err = a.store.UpdateOperator(ctx, o, true, act)
	if errors.Is(err, ErrLastAdmin) {
		field := "role"
		if o.Disabled && !old.Disabled {
			field = "disabled"
		}
		return Operator{}, &otp.ErrInvalidRequest{
			Detail: "this is the last active admin: make another account an admin before disabling or demoting this one",
			Fields: map[string]string{field: "the last active admin cannot be disabled or demoted"},
		}
	}
	if err != nil {
		return Operator{}, fmt.Errorf("operators: update: %w", err)
	}
	return o, nil
}

// CreateToken implements AdminService.
func (a *Admin) CreateToken(ctx context.Context, operatorID string, n NewToken, actor string) (CreatedToken, error) {
	o, err := a.operator(ctx, operatorID)
	if err != nil {
		return CreatedToken{}, err
	}
	bad := map[string]string{}
	name := strings.TrimSpace(n.Name)
	if !oneLine(name, maxName) {
		bad["name"] = fmt.Sprintf("must be one line of at most %d characters", maxName)
	}
	ttl := n.ExpiresIn
	if ttl == 0 {
		ttl = DefaultTokenTTL
	}
	if ttl < time.Hour || ttl > MaxTokenTTL {
		bad["expires_in"] = fmt.Sprintf("must be between 1h and %s", MaxTokenTTL)
	}
	if len(bad) > 0 {
		return CreatedToken{}, &otp.ErrInvalidRequest{Fields: bad}
	}
	now := a.Now().Truncate(time.Microsecond)
	id, secret, hash := newTokenSecret()
	t := Token{ID: id, OperatorID: o.ID, Name: name, Hash: hash, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	detail := fmt.Sprintf("token %s of %s; name %q; expires %s", id, o.Email, name, t.ExpiresAt.Format(time.RFC3339))
	if err := a.store.CreateToken(ctx, t, audit(ActionTokenCreate, o.ID, detail, actor, "", detail)); err != nil {
		return CreatedToken{}, fmt.Errorf("operators: create token: %w", err)
	}
	return CreatedToken{Token: t, Secret: secret}, nil
}

// RevokeToken implements AdminService.
func (a *Admin) RevokeToken(ctx context.Context, operatorID, tokenID, actor string) error {
	o, err := a.operator(ctx, operatorID)
	if err != nil {
		return err
	}
	detail := fmt.Sprintf("token %s of %s", tokenID, o.Email)
	if err := a.store.RevokeToken(ctx, o.ID, tokenID, a.Now(), audit(ActionTokenRevoke, o.ID, detail, actor, detail+" live", detail+" revoked")); err != nil {
		return fmt.Errorf("operators: revoke token: %w", err)
	}
	return nil
}

// audit makes the audit entry of a change of an account, with what it was and is.
func audit(action, operatorID, detail, actor, before, after string) history.AdminAction {
	return history.AdminAction{Action: action, Target: "operator:" + operatorID, Detail: detail + "; by " + actor, Before: before, After: after}
}

// describe sums an account up for the audit log. The subject is in it, so binding an
// account to an identity, the one change that decides who signs in to it, shows.
func describe(o Operator) string {
	return fmt.Sprintf("email %q; subject %q; name %q; role %s (from console %v); disabled %v", o.Email, o.Subject, o.Name, o.Role, o.RoleFromConsole, o.Disabled)
}
