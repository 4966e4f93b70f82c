package operators

import (
	"context"
	"time"

	"otpgate/internal/history"
)

// Store keeps operator accounts and their tokens. Every change is audited in the same
// transaction. Implementations: internal/postgres and internal/inmem; operatorstest
// holds the behaviour both must share.
type Store interface {
	// ListOperators lists every account, by email.
	ListOperators(ctx context.Context) ([]Operator, error)
	// OperatorByID returns one account. Errors: otp.ErrNotFound.
	OperatorByID(ctx context.Context, id string) (Operator, error)
	// OperatorByEmail returns the account of a (normalised) address. Errors: otp.ErrNotFound.
	OperatorByEmail(ctx context.Context, email string) (Operator, error)
	// OperatorBySubject returns the account an identity provider's subject signed in to.
	// Errors: otp.ErrNotFound.
	OperatorBySubject(ctx context.Context, subject string) (Operator, error)
	// CreateOperator stores a new account. Errors: *otp.ErrInvalidRequest naming email
	// (or subject) when another account has it.
	CreateOperator(ctx context.Context, o Operator, audit history.AdminAction) error
	// UpdateOperator replaces an account's fields but its id, creation time, last use,
	// last sign-in and session epoch. With keepAnAdmin, a change that would leave no
	// active admin (the account is the last one, and is disabled or demoted) is refused,
	// also when two such changes race. Errors: otp.ErrNotFound, ErrLastAdmin,
	// *otp.ErrInvalidRequest naming subject when another account has it.
	UpdateOperator(ctx context.Context, o Operator, keepAnAdmin bool, audit history.AdminAction) error
	// OperatorTokens lists an account's tokens, revoked and expired ones included, oldest first.
	OperatorTokens(ctx context.Context, operatorID string) ([]Token, error)
	// CreateToken stores a new token of an existing account. Errors: otp.ErrNotFound.
	CreateToken(ctx context.Context, t Token, audit history.AdminAction) error
	// RevokeToken revokes a live token of the account. Errors: otp.ErrNotFound.
	RevokeToken(ctx context.Context, operatorID, tokenID string, at time.Time, audit history.AdminAction) error
	// TokenByHash finds a token, live or not, by the hash of its secret. Errors: otp.ErrNotFound.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// EndSessions voids every console session of the account by moving its SessionEpoch
	// on; an unknown account is no error. It is not audited, as a sign-out is not.
	EndSessions(ctx context.Context, operatorID string) error
	// UseLoginState records that the single sign-on whose state hashes to stateHash
	// came back, and keeps the record until expires, after which the state's cookie is
	// refused anyway; records expired at now may be dropped. Errors: ErrLoginUsed when the
	// state came back before.
	UseLoginState(ctx context.Context, stateHash []byte, expires, now time.Time) error
	// TouchOperator records that an account signed in or used a token (tokenID, "" for a
	// single sign-on, which sets SignedInAt too) at at; it is not audited.
	TouchOperator(ctx context.Context, operatorID, tokenID string, at time.Time) error
}

// Audit log actions of operators.
const (
	ActionOperatorCreate = "operator_create"
	ActionOperatorUpdate = "operator_update"
	ActionTokenCreate    = "operator_token_create"
	ActionTokenRevoke    = "operator_token_revoke"
	// ActionOperatorSignIn is written when single sign-on creates an account or changes
	// its subject, name or claimed role.
	ActionOperatorSignIn = "operator_signin"
)
