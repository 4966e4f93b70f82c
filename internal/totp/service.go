package totp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/templates"
)

// ScopeFactor is the limiter scope of guesses at a factor's codes, keyed by the factor's
// id: every code presented for it, at enrolment or in a challenge, passes its rules, and a
// right code gives its reservation back, so only wrong guesses count.
const ScopeFactor = "totp_factor"

// GuessRules bound the wrong guesses at one factor: plenty for a user who mistypes, a
// one-in-tens-of-thousands chance a day at six digits for someone guessing.
var GuessRules = []rate.Rule{{Limit: 5, Window: time.Minute}, {Limit: 20, Window: time.Hour}}

// Errors of the service beyond the domain's.
var (
	// ErrUnverified refuses a challenge of a factor whose enrolment no code confirmed.
	ErrUnverified = &otp.ErrInvalidRequest{Detail: "the factor is not verified: confirm it with a first code from the authenticator",
		Fields: map[string]string{"factor_id": "is not verified yet"}}
	// ErrEntityExists refuses a second entity with one identity.
	ErrEntityExists = &otp.ErrInvalidRequest{Detail: "an entity with this identity exists already",
		Fields: map[string]string{"identity": "is an entity of this app already"}}
	errNoEntity    = otp.Errorf(otp.CodeNotFound, "no entity with this identity")
	errNoFactor    = otp.Errorf(otp.CodeNotFound, "no factor with this id for the entity")
	errNoChallenge = otp.Errorf(otp.CodeNotFound, "no challenge with this id for the entity")
)

// Service manages entities, factors and challenges; the native API and the Twilio adapter
// call it.
type Service struct {
	store   Store
	limiter otp.Limiter
	sealer  *Sealer
	// Rules bound the guesses at one factor (GuessRules unless set).
	Rules []rate.Rule
	// Now and NewID are the clock and the id source; tests replace them.
	Now   func() time.Time
	NewID func() string
}

// NewService returns the service over its store, the limiter guesses pass and the sealer
// of secrets; newID makes the ids of rows (UUIDs, which the Twilio adapter writes as sids).
func NewService(store Store, limiter otp.Limiter, sealer *Sealer, newID func() string) *Service {
	return &Service{store: store, limiter: limiter, sealer: sealer, Rules: GuessRules,
		Now: func() time.Time { return time.Now().UTC() }, NewID: newID}
}

// MaxIdentity and MaxFriendlyName bound an identity's and a factor name's length.
const (
	MinIdentity     = 8
	MaxIdentity     = 64
	MaxFriendlyName = 64
)

// validIdentity holds an identity to Twilio's rule: 8 to 64 letters, digits and dashes,
// an id of the app's own (a UUID, say), never a phone number or an address.
func validIdentity(s string) bool {
	if len(s) < MinIdentity || len(s) > MaxIdentity {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
	}) < 0
}

const identityProblem = "must be 8 to 64 letters, digits and dashes: the app's own id of the user, not personal data"

// checkIdentity refuses a malformed identity before anything is looked up.
func checkIdentity(identity string) error {
	if !validIdentity(identity) {
		return &otp.ErrInvalidRequest{Fields: map[string]string{"identity": identityProblem}}
	}
	return nil
}

// CreateEntity creates the app's entity with identity. Errors: *otp.ErrInvalidRequest
// (ErrEntityExists among them).
func (s *Service) CreateEntity(ctx context.Context, appID, identity string) (Entity, error) {
	if err := checkIdentity(identity); err != nil {
		return Entity{}, err
	}
	e, created, err := s.store.EnsureEntity(ctx, Entity{ID: s.NewID(), AppID: appID, Identity: identity, CreatedAt: s.now()})
	if err != nil {
		return Entity{}, fmt.Errorf("totp: create entity: %w", err)
	}
	if !created {
		return Entity{}, ErrEntityExists
	}
	return e, nil
}

// Entity returns the app's entity with identity. Errors: otp.CodeNotFound.
func (s *Service) Entity(ctx context.Context, appID, identity string) (Entity, error) {
	if !validIdentity(identity) {
		return Entity{}, errNoEntity
	}
	e, err := s.store.Entity(ctx, appID, identity)
	return e, notFound(err, errNoEntity)
}

// Entities lists the app's entities, oldest first.
func (s *Service) Entities(ctx context.Context, appID string) ([]Entity, error) {
	list, err := s.store.Entities(ctx, appID)
	if err != nil {
		return nil, fmt.Errorf("totp: entities: %w", err)
	}
	return list, nil
}

// DeleteEntity deletes the entity with its factors and challenges. Errors: otp.CodeNotFound.
func (s *Service) DeleteEntity(ctx context.Context, appID, identity string) error {
	if !validIdentity(identity) {
		return errNoEntity
	}
	return notFound(s.store.DeleteEntity(ctx, appID, identity), errNoEntity)
}

// NewFactor asks for a factor.
type NewFactor struct {
	// Identity is the entity's; the entity is created when it does not exist yet.
	Identity     string
	FriendlyName string
	Config       Config
	// Secret is the secret the caller brings (already decoded); nil draws one.
	Secret []byte
}

// Enrolment is a new factor with what the user's authenticator needs, shown once: the
// secret in base32 and the otpauth:// URI (the QR code's content).
type Enrolment struct {
	Factor Factor
	Secret string
	URI    string
}

// checkName refuses a friendly name that is empty, too long, or holds control, bidi or
// invisible characters: it is the account name of the otpauth label an authenticator app
// shows, where a right-to-left override or a zero-width character would disguise it.
func checkName(name string, f map[string]string) {
	switch {
	case strings.TrimSpace(name) == "":
		f["friendly_name"] = "is required"
	case !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxFriendlyName:
		f["friendly_name"] = "must be at most 64 characters, without control characters"
	case templates.HiddenText(name):
		f["friendly_name"] = "must not hold control, formatting, bidirectional or invisible characters"
	}
}

// CreateFactor creates an unverified TOTP factor for an entity of app (created with it
// when it does not exist); the issuer of its URI is the app's name. Errors:
// *otp.ErrInvalidRequest naming identity, friendly_name, alg, digits, period or skew.
func (s *Service) CreateFactor(ctx context.Context, app otp.App, n NewFactor) (Enrolment, error) {
	f := map[string]string{}
	if !validIdentity(n.Identity) {
		f["identity"] = identityProblem
	}
	checkName(n.FriendlyName, f)
	var invalid *otp.ErrInvalidRequest
	if err := n.Config.Validate(); errors.As(err, &invalid) {
		for k, v := range invalid.Fields {
			f[k] = v
		}
	}
	if n.Secret != nil && (len(n.Secret) < 10 || len(n.Secret) > 64) {
		f["secret"] = "must be 80 to 512 bits in base32"
	}
	if len(f) > 0 {
		return Enrolment{}, &otp.ErrInvalidRequest{Fields: f}
	}
	now := s.now()
	e, _, err := s.store.EnsureEntity(ctx, Entity{ID: s.NewID(), AppID: app.ID, Identity: n.Identity, CreatedAt: now})
	if err != nil {
		return Enrolment{}, fmt.Errorf("totp: create factor: %w", err)
	}
	secret := n.Secret
	if secret == nil {
		secret = newSecret()
	}
	fac := Factor{ID: s.NewID(), AppID: app.ID, EntityID: e.ID, Identity: e.Identity, FriendlyName: n.FriendlyName,
		Status: FactorUnverified, Config: n.Config, CreatedAt: now, UpdatedAt: now}
	fac.Sealed = s.sealer.Seal(fac.ID, secret)
	if err := s.store.CreateFactor(ctx, fac); err != nil {
		return Enrolment{}, fmt.Errorf("totp: create factor: %w", err)
	}
	issuer := app.Name
	if issuer == "" {
		issuer = "otpgate"
	}
	return Enrolment{Factor: fac, Secret: EncodeSecret(secret), URI: URI(issuer, n.FriendlyName, secret, n.Config)}, nil
}

// Factor returns a factor of the entity. Errors: otp.CodeNotFound.
func (s *Service) Factor(ctx context.Context, appID, identity, id string) (Factor, error) {
	if !validIdentity(identity) {
		return Factor{}, errNoFactor
	}
	f, err := s.store.Factor(ctx, appID, identity, id)
	return f, notFound(err, errNoFactor)
}

// Factors lists the entity's factors, oldest first. Errors: otp.CodeNotFound when there is
// no such entity.
func (s *Service) Factors(ctx context.Context, appID, identity string) ([]Factor, error) {
	if _, err := s.Entity(ctx, appID, identity); err != nil {
		return nil, err
	}
	list, err := s.store.Factors(ctx, appID, identity)
	if err != nil {
		return nil, fmt.Errorf("totp: factors: %w", err)
	}
	return list, nil
}

// RenameFactor changes a factor's friendly name. Errors: *otp.ErrInvalidRequest naming
// friendly_name, otp.CodeNotFound.
func (s *Service) RenameFactor(ctx context.Context, appID, identity, id, name string) (Factor, error) {
	f := map[string]string{}
	checkName(name, f)
	if len(f) > 0 {
		return Factor{}, &otp.ErrInvalidRequest{Fields: f}
	}
	if !validIdentity(identity) {
		return Factor{}, errNoFactor
	}
	fac, err := s.store.RenameFactor(ctx, appID, identity, id, name, s.now())
	return fac, notFound(err, errNoFactor)
}

// DeleteFactor deletes a factor with its challenges. Errors: otp.CodeNotFound.
func (s *Service) DeleteFactor(ctx context.Context, appID, identity, id string) error {
	if !validIdentity(identity) {
		return errNoFactor
	}
	return notFound(s.store.DeleteFactor(ctx, appID, identity, id), errNoFactor)
}

// VerifyFactor confirms a factor's enrolment with a code from the user's authenticator:
// a right, unused code verifies it (a verified factor stays verified). accepted tells
// whether the code was; the factor is returned as it is after the call. Errors:
// *otp.ErrInvalidRequest naming code, otp.CodeNotFound, *otp.ErrRateLimited.
func (s *Service) VerifyFactor(ctx context.Context, appID, identity, id, code string) (Factor, bool, error) {
	fac, err := s.Factor(ctx, appID, identity, id)
	if err != nil {
		return Factor{}, false, err
	}
	return s.guess(ctx, fac, code)
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// notFound puts the service's own not-found error in place of the store's.
func notFound(err, mine error) error {
	if errors.Is(err, otp.ErrNotFound) {
		return mine
	}
	return err
}
