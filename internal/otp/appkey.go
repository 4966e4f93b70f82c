package otp

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"
)

// AppKey is one API key of an app. Only the SHA-256 of its secret is kept.
type AppKey struct {
	// ID names the key, such as "SK" and 32 hex digits; it is the user name of HTTP Basic.
	ID    string
	AppID string
	Name  string
	// Hash is SHA-256 of the secret.
	Hash []byte
	// TrustedClientIP lets the key's caller name the end user's address in Otpgate-Client-Ip.
	TrustedClientIP bool
	CreatedAt       time.Time
	// LastUsedAt is when the key last authenticated a call, to the minute; zero if never.
	LastUsedAt time.Time
	// RevokedAt is set once the key is revoked; a revoked key authenticates nothing.
	RevokedAt time.Time
}

// Shape of key ids and secrets. A secret is KeySecretPrefix, its key's id and 64 hex
// digits of randomness: only letters and digits, as Twilio's helper libraries demand of
// a password, and it names its key, so a bearer secret alone finds it.
const (
	// KeySecretPrefix starts every key secret, so that secret scanners and people recognise one.
	KeySecretPrefix = "otpgate"
	// KeyIDLen is the length of a key id: "SK" and 32 hex digits, as Twilio's API key sids.
	KeyIDLen        = 34
	keySecretRandom = 64
)

// KeyIDOf returns the id of the key a secret belongs to.
func KeyIDOf(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, KeySecretPrefix)
	if !ok || len(rest) != KeyIDLen+keySecretRandom || !strings.HasPrefix(rest, "SK") {
		return "", false
	}
	return rest[:KeyIDLen], true
}

// Revoked reports whether the key was revoked.
func (k AppKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// ErrBadKey means an API key is missing, wrong or revoked; nothing was spent.
var ErrBadKey = Errorf(CodeUnauthorized, "API key missing, wrong or revoked")

// Caller is who makes a call to an app: anyone, for a public app without a key, or
// the holder of one of its keys.
type Caller struct {
	// Key is the key the call came with; its ID is empty for a call without one.
	Key AppKey
}

// AppDirectory finds apps and authenticates their keys for the public APIs, from a
// snapshot of the configuration that every instance keeps current; internal/apps
// implements it.
type AppDirectory interface {
	// App returns the app with the id (see CanonAppID for the ids URLs use).
	// Errors: ErrNotFound, also for a deleted app.
	App(ctx context.Context, id string) (App, error)
	// Authenticate returns the live key with the id whose secret is secret, comparing
	// in constant time. Errors: ErrBadKey for an unknown, revoked or wrong key.
	Authenticate(ctx context.Context, keyID, secret string) (AppKey, error)
}

// Authorize decides whether a caller with key (ID empty for none) may call app.
// A key app needs one of its own keys; a public app takes calls without one, but a
// key that was given must be one of the app's. Errors: ErrBadKey.
func Authorize(app App, key AppKey) error {
	if key.ID == "" {
		if app.Access == AccessKey {
			return ErrBadKey
		}
		return nil
	}
	if key.AppID != app.ID || key.Revoked() {
		return ErrBadKey
	}
	return nil
}

// AppSet is every live app and key, as one consistent read of the store.
type AppSet struct {
	// Version grows with every change; a reloader compares it to its own.
	Version int64
	Apps    []App
	Keys    []AppKey
}

// AppStore keeps apps and their keys. Every change is audited in the same
// transaction, so nothing is half-written. Implementations: internal/postgres and
// internal/inmem; internal/storetest holds the behaviour both must share.
type AppStore interface {
	// LoadApps reads every app that is not deleted and every key that is not revoked.
	LoadApps(ctx context.Context) (AppSet, error)
	// AppsVersion is the version LoadApps would return now: cheap, for polling.
	AppsVersion(ctx context.Context) (int64, error)
	// AppByID returns one app that is not deleted. Errors: ErrNotFound.
	AppByID(ctx context.Context, id string) (App, error)
	// AppKeys lists an app's keys, revoked ones included, oldest first.
	AppKeys(ctx context.Context, appID string) ([]AppKey, error)
	// CreateApp stores a new app. Errors: *ErrInvalidRequest from App.Validate.
	CreateApp(ctx context.Context, a App, audit AdminAction) error
	// UpdateApp replaces the settings of an app that is not deleted.
	// Errors: ErrNotFound, *ErrInvalidRequest from App.Validate.
	UpdateApp(ctx context.Context, a App, audit AdminAction) error
	// DeleteApp marks an app deleted, revokes its keys and deletes its webhook endpoints with
	// their deliveries; its history stays.
	// Errors: ErrNotFound.
	DeleteApp(ctx context.Context, id string, at time.Time, audit AdminAction) error
	// CreateKey stores a new key of an app.
	CreateKey(ctx context.Context, k AppKey, audit AdminAction) error
	// RevokeKey revokes a live key of the app. Errors: ErrNotFound.
	RevokeKey(ctx context.Context, appID, keyID string, at time.Time, audit AdminAction) error
	// TouchKeys records when keys were last used; it changes no version. Unknown keys are skipped.
	TouchKeys(ctx context.Context, used map[string]time.Time) error
}

// Audit log actions of apps and keys.
const (
	ActionAppCreate = "app_create"
	ActionAppUpdate = "app_update"
	ActionAppDelete = "app_delete"
	ActionKeyCreate = "key_create"
	ActionKeyRevoke = "key_revoke"
)

// AppPatch changes some settings of an app; nil fields stay as they are.
type AppPatch struct {
	Name             *string
	CodeLength       *int
	CodeTTL          *time.Duration
	MaxSends         *int
	MaxAttempts      *int
	Locales          *[]string
	AllowedCountries *[]string
	Channels         *[]string
	// SendRules and CheckRules are rule lists as the environment writes them, such as "1/1m,10/1h".
	SendRules  *string
	CheckRules *string
	Access     *Access
	// Templates replaces the app's templates, all locales at once.
	Templates      *map[string]MessageTemplates
	WebOTPDomain   *string
	AndroidAppHash *string
}

// Apply returns a with the patch's fields set and validated by App.Validate. Errors:
// *ErrInvalidRequest naming every bad field, send_rules and check_rules included.
func (p AppPatch) Apply(a App) (App, error) {
	fields := map[string]string{}
	for name, f := range map[string]struct {
		raw *string
		dst *Rules
	}{"send_rules": {p.SendRules, &a.SendRules}, "check_rules": {p.CheckRules, &a.CheckRules}} {
		if f.raw != nil {
			if err := f.dst.UnmarshalText([]byte(*f.raw)); err != nil {
				fields[name] = err.Error()
			}
		}
	}
	set(&a.Name, p.Name)
	set(&a.CodeLength, p.CodeLength)
	set(&a.CodeTTL, p.CodeTTL)
	set(&a.MaxSends, p.MaxSends)
	set(&a.MaxAttempts, p.MaxAttempts)
	set(&a.Locales, p.Locales)
	set(&a.AllowedCountries, p.AllowedCountries)
	set(&a.Channels, p.Channels)
	set(&a.Access, p.Access)
	set(&a.Templates, p.Templates)
	set(&a.WebOTPDomain, p.WebOTPDomain)
	set(&a.AndroidAppHash, p.AndroidAppHash)
	a, err := a.Validate()
	var invalid *ErrInvalidRequest
	if errors.As(err, &invalid) {
		maps.Copy(fields, invalid.Fields)
	} else if err != nil {
		return a, err
	}
	if len(fields) > 0 {
		return a, &ErrInvalidRequest{Fields: fields}
	}
	return a, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// AppInfo is an app with its keys, for the admin console and API.
type AppInfo struct {
	App  App
	Keys []AppKey
}

// NewKey asks for a key.
type NewKey struct {
	Name            string
	TrustedClientIP bool
}

// CreatedKey is a key just made, with its secret: the only time the secret is shown.
type CreatedKey struct {
	Key    AppKey
	Secret string
}

// AppAdmin manages apps and keys for the admin console and API; internal/apps
// implements it. actor names who acts, for the audit log.
type AppAdmin interface {
	// ListApps returns every app, the default one first, with its keys.
	ListApps(ctx context.Context) ([]AppInfo, error)
	// GetApp returns one app with its keys. Errors: ErrNotFound.
	GetApp(ctx context.Context, id string) (AppInfo, error)
	// CreateApp makes an app: the patch over the default app's settings.
	// Errors: *ErrInvalidRequest.
	CreateApp(ctx context.Context, p AppPatch, actor string) (AppInfo, error)
	// UpdateApp changes an app. Errors: ErrNotFound, *ErrInvalidRequest (also for the
	// default app, whose settings come from the environment).
	UpdateApp(ctx context.Context, id string, p AppPatch, actor string) (AppInfo, error)
	// DeleteApp deletes an app and revokes its keys. Errors: ErrNotFound,
	// *ErrInvalidRequest for the default app.
	DeleteApp(ctx context.Context, id, actor string) error
	// CreateKey makes a key for an app. Errors: ErrNotFound, *ErrInvalidRequest.
	CreateKey(ctx context.Context, appID string, k NewKey, actor string) (CreatedKey, error)
	// RevokeKey revokes a key of an app. Errors: ErrNotFound.
	RevokeKey(ctx context.Context, appID, keyID, actor string) error
}
