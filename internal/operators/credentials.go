package operators

import (
	"context"
	"errors"
	"fmt"

	"otpgate/internal/otp"
)

// Authenticate implements AdminService. The secret is looked up by its hash, so no
// comparison in Go runs over the secret's bytes.
func (a *Admin) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if !LooksLikeToken(secret) {
		return Principal{}, ErrBadToken
	}
	t, err := a.store.TokenByHash(ctx, HashSecret(secret))
	if errors.Is(err, otp.ErrNotFound) {
		return Principal{}, ErrBadToken
	}
	if err != nil {
		return Principal{}, fmt.Errorf("operators: authenticate: %w", err)
	}
	now := a.Now()
	if !t.LiveAt(now) {
		return Principal{}, ErrBadToken
	}
	o, err := a.account(ctx, t.OperatorID)
	if err != nil {
		return Principal{}, err
	}
	if o.RoleFromClaims() && a.ClaimsRecheck > 0 && now.Sub(o.SignedInAt) >= a.ClaimsRecheck {
		// The claims that gave the role are too old to trust: the person may have left
		// the provider's groups since. A sign-in refreshes them (or disables the account).
		return Principal{}, ErrBadToken
	}
	p := Principal{Kind: KindToken, Role: o.Role, Operator: o, TokenID: t.ID}
	if now.Sub(t.LastUsedAt) >= touchEvery {
		if err := a.store.TouchOperator(ctx, t.OperatorID, t.ID, now); err != nil {
			return Principal{}, fmt.Errorf("operators: touch: %w", err)
		}
	}
	return p, nil
}

// Session implements AdminService.
func (a *Admin) Session(ctx context.Context, operatorID string, epoch int64) (Principal, error) {
	o, err := a.account(ctx, operatorID)
	if err != nil {
		return Principal{}, err
	}
	if o.SessionEpoch != epoch {
		return Principal{}, ErrBadToken
	}
	return Principal{Kind: KindSession, Role: o.Role, Operator: o}, nil
}

// EndSessions implements AdminService.
func (a *Admin) EndSessions(ctx context.Context, operatorID string) error {
	if err := a.store.EndSessions(ctx, operatorID); err != nil {
		return fmt.Errorf("operators: end sessions: %w", err)
	}
	return nil
}

// account reads the account a credential names, as it is now. Errors: ErrBadToken when
// it is gone, disabled or without a role, or ones wrapping otp.ErrUnavailable.
func (a *Admin) account(ctx context.Context, operatorID string) (Operator, error) {
	o, err := a.store.OperatorByID(ctx, operatorID)
	if errors.Is(err, otp.ErrNotFound) {
		return Operator{}, ErrBadToken
	}
	if err != nil {
		return Operator{}, fmt.Errorf("operators: account: %w", err)
	}
	if o.Disabled || !o.Role.Valid() {
		return Operator{}, ErrBadToken
	}
	return o, nil
}
