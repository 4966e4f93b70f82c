package totp

import (
	"context"
	"time"
)

// Entity is one user of an app, known by the identity the app gives it (a user id, never
// a phone number or an address); it holds the user's factors.
type Entity struct {
	ID       string
	AppID    string
	Identity string
	// CreatedAt is also when it last changed: an entity has nothing to change.
	CreatedAt time.Time
}

// FactorStatus is whether a factor's enrolment was confirmed.
type FactorStatus string

// A factor is unverified until a first code proves that the user's authenticator holds
// its secret; only a verified factor answers challenges.
const (
	FactorUnverified FactorStatus = "unverified"
	FactorVerified   FactorStatus = "verified"
)

// Factor is one TOTP secret of an entity, as the store keeps it: the secret sealed, never
// in plain.
type Factor struct {
	ID           string
	AppID        string
	EntityID     string
	Identity     string
	FriendlyName string
	Status       FactorStatus
	Config       Config
	// Sealed is the secret, sealed by a Sealer for this id.
	Sealed []byte
	// LastStep is the last time step a code was accepted for; 0 before the first.
	LastStep  int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ChallengeStatus is how a challenge was decided.
type ChallengeStatus string

// A TOTP challenge is decided when it is made: approved when its code was right and new,
// denied otherwise.
const (
	ChallengeApproved ChallengeStatus = "approved"
	ChallengeDenied   ChallengeStatus = "denied"
)

// Challenge is one decided attempt to authenticate an entity with a factor.
type Challenge struct {
	ID        string
	AppID     string
	EntityID  string
	Identity  string
	FactorID  string
	Status    ChallengeStatus
	CreatedAt time.Time
}

// Store keeps entities, factors and challenges. Every read is scoped by the app: another
// app's rows are not found. Errors: otp.ErrNotFound where a row is missing, anything
// wrapping otp.ErrUnavailable when the store cannot answer.
type Store interface {
	// EnsureEntity returns the app's entity with e.Identity, creating e when there is
	// none; created tells which.
	EnsureEntity(ctx context.Context, e Entity) (Entity, bool, error)
	// Entity returns the app's entity with identity.
	Entity(ctx context.Context, appID, identity string) (Entity, error)
	// Entities lists the app's entities, oldest first.
	Entities(ctx context.Context, appID string) ([]Entity, error)
	// DeleteEntity deletes an entity with its factors and challenges.
	DeleteEntity(ctx context.Context, appID, identity string) error
	// CreateFactor stores a new factor of an existing entity.
	CreateFactor(ctx context.Context, f Factor) error
	// Factor returns the factor id of the entity with identity.
	Factor(ctx context.Context, appID, identity, id string) (Factor, error)
	// Factors lists the entity's factors, oldest first.
	Factors(ctx context.Context, appID, identity string) ([]Factor, error)
	// RenameFactor changes a factor's friendly name at now.
	RenameFactor(ctx context.Context, appID, identity, id, name string, now time.Time) (Factor, error)
	// DeleteFactor deletes a factor with its challenges.
	DeleteFactor(ctx context.Context, appID, identity, id string) error
	// AcceptStep records that a code of time step step was accepted for the factor at now,
	// verifying it when it was unverified, in one atomic change that happens only while
	// the factor's last accepted step is below step: two requests with one code cannot
	// both succeed. ok is false (and nothing changed) when step was not above it; the
	// factor is returned as it is after the call.
	AcceptStep(ctx context.Context, appID, id string, step int64, now time.Time) (f Factor, ok bool, err error)
	// CreateChallenge stores a decided challenge.
	CreateChallenge(ctx context.Context, c Challenge) error
	// Challenge returns the challenge id of the entity with identity.
	Challenge(ctx context.Context, appID, identity, id string) (Challenge, error)
	// Challenges lists the entity's challenges, newest first, those of factorID only when
	// it is set and those of status only when it is set.
	Challenges(ctx context.Context, appID, identity, factorID string, status ChallengeStatus) ([]Challenge, error)
}
