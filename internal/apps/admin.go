package apps

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// maxKeyName bounds a key's name.
const maxKeyName = 64

// Admin implements AdminService: every change is validated by otp.App.Validate, written
// with its audit entry in one store transaction, and applied to this instance's
// registry at once; the other instances follow within their poll interval.
type Admin struct {
	store    Store
	registry *Registry

	// Now is the clock of created, updated and revoked times; tests replace it.
	Now func() time.Time
	// NewID makes app and test number ids; tests replace it.
	NewID func() string
	// DefaultRegion reads test numbers written without a country code (OTP_DEFAULT_REGION).
	DefaultRegion string
}

var _ AdminService = (*Admin)(nil)

// NewAdmin returns the admin service over store, keeping registry current.
func NewAdmin(store Store, registry *Registry) *Admin {
	return &Admin{
		store: store, registry: registry,
		Now:   func() time.Time { return time.Now().UTC() },
		NewID: func() string { return uuid.Must(uuid.NewV7()).String() },
	}
}

// ListApps implements AdminService.
func (a *Admin) ListApps(ctx context.Context) ([]Info, error) {
	set, err := a.store.LoadApps(ctx)
	if err != nil {
		return nil, fmt.Errorf("apps: list: %w", err)
	}
	all := append([]otp.App{a.registry.DefaultApp()}, set.Apps...)
	out := make([]Info, len(all))
	for i, app := range all {
		keys, err := a.store.AppKeys(ctx, app.ID)
		if err != nil {
			return nil, fmt.Errorf("apps: list keys: %w", err)
		}
		out[i] = Info{App: app, Keys: keys}
	}
	return out, nil
}

// GetApp implements AdminService; it reads the store, not the snapshot, so the admin
// sees a change at once.
func (a *Admin) GetApp(ctx context.Context, id string) (Info, error) {
	app, err := a.app(ctx, id)
	if err != nil {
		return Info{}, err
	}
	keys, err := a.store.AppKeys(ctx, app.ID)
	if err != nil {
		return Info{}, fmt.Errorf("apps: keys: %w", err)
	}
	return Info{App: app, Keys: keys}, nil
}

// app finds an app by a URL's reference: the default app, or a stored one.
func (a *Admin) app(ctx context.Context, ref string) (otp.App, error) {
	id, ok := otp.CanonAppID(ref)
	if !ok {
		return otp.App{}, otp.ErrNotFound
	}
	if id == otp.DefaultAppID {
		return a.registry.DefaultApp(), nil
	}
	app, err := a.store.AppByID(ctx, id)
	if err != nil {
		return otp.App{}, fmt.Errorf("apps: %w", err)
	}
	return app, nil
}

// CreateApp implements AdminService: unset fields take the default app's settings,
// except its name, which a new app must have, and its access, public unless set (the
// default app's may be off, which no other app can be).
func (a *Admin) CreateApp(ctx context.Context, p Patch, actor string) (Info, error) {
	base := a.registry.DefaultApp()
	base.Name, base.Default, base.Access = "", false, otp.AccessPublic
	now := a.Now().Truncate(time.Microsecond)
	base.ID, base.CreatedAt, base.UpdatedAt = a.NewID(), now, now
	app, err := p.Apply(base)
	if err != nil {
		return Info{}, err
	}
	if err := a.store.CreateApp(ctx, app, withChange(audit(ActionAppCreate, app.ID, describe(app), actor), "", describe(app))); err != nil {
		return Info{}, fmt.Errorf("apps: create: %w", err)
	}
	a.refresh(ctx)
	return Info{App: app}, nil
}

// UpdateApp implements AdminService.
func (a *Admin) UpdateApp(ctx context.Context, id string, p Patch, actor string) (Info, error) {
	old, err := a.app(ctx, id)
	if err != nil {
		return Info{}, err
	}
	if old.Default {
		return Info{}, errDefaultReadOnly
	}
	old.UpdatedAt = a.Now().Truncate(time.Microsecond)
	app, err := p.Apply(old)
	if err != nil {
		return Info{}, err
	}
	if err := a.store.UpdateApp(ctx, app, withChange(audit(ActionAppUpdate, app.ID, describe(app), actor), describe(old), describe(app))); err != nil {
		return Info{}, fmt.Errorf("apps: update: %w", err)
	}
	a.refresh(ctx)
	return a.GetApp(ctx, app.ID)
}

// DeleteApp implements AdminService.
func (a *Admin) DeleteApp(ctx context.Context, id, actor string) error {
	app, err := a.app(ctx, id)
	if err != nil {
		return err
	}
	if app.Default {
		return errDefaultReadOnly
	}
	if err := a.store.DeleteApp(ctx, app.ID, a.Now(), withChange(audit(ActionAppDelete, app.ID, "name "+app.Name, actor), describe(app), "")); err != nil {
		return fmt.Errorf("apps: delete: %w", err)
	}
	a.refresh(ctx)
	return nil
}

// CreateKey implements AdminService.
func (a *Admin) CreateKey(ctx context.Context, appID string, nk NewKey, actor string) (CreatedKey, error) {
	app, err := a.app(ctx, appID)
	if err != nil {
		return CreatedKey{}, err
	}
	name := strings.TrimSpace(nk.Name)
	if utf8.RuneCountInString(name) > maxKeyName || strings.ContainsAny(name, "\r\n\t") {
		return CreatedKey{}, &otp.ErrInvalidRequest{Fields: map[string]string{"name": fmt.Sprintf("must be one line of at most %d characters", maxKeyName)}}
	}
	id, secret, hash := newSecret()
	k := Key{ID: id, AppID: app.ID, Name: name, Hash: hash, TrustedClientIP: nk.TrustedClientIP, CreatedAt: a.Now().Truncate(time.Microsecond)}
	detail := fmt.Sprintf("app %s; name %q; trusted_client_ip %v", app.ID, name, nk.TrustedClientIP)
	if err := a.store.CreateKey(ctx, k, withChange(audit(ActionKeyCreate, "key:"+id, detail, actor), "", detail)); err != nil {
		return CreatedKey{}, fmt.Errorf("apps: create key: %w", err)
	}
	a.refresh(ctx)
	return CreatedKey{Key: k, Secret: secret}, nil
}

// RevokeKey implements AdminService.
func (a *Admin) RevokeKey(ctx context.Context, appID, keyID, actor string) error {
	app, err := a.app(ctx, appID)
	if err != nil {
		return err
	}
	if err := a.store.RevokeKey(ctx, app.ID, keyID, a.Now(), withChange(audit(ActionKeyRevoke, "key:"+keyID, "app "+app.ID, actor), "key "+keyID+" live", "key "+keyID+" revoked")); err != nil {
		return fmt.Errorf("apps: revoke key: %w", err)
	}
	a.refresh(ctx)
	return nil
}

// refresh applies a change to this instance at once. A failed reload only delays it
// to the next poll, so it is not the caller's error.
func (a *Admin) refresh(ctx context.Context) {
	if err := a.registry.Reload(ctx); err != nil {
		a.registry.log.Warn("apps: reload after a change failed; the next poll retries", "err", err)
	}
}

// errDefaultReadOnly refuses changes of the default app's settings.
var errDefaultReadOnly = &otp.ErrInvalidRequest{
	Detail: "the default app's settings come from the environment (OTP_*); only its keys can be managed here",
	Fields: map[string]string{"id": "is the default app, which cannot be changed or deleted here"},
}

func audit(action, target, detail, actor string) history.AdminAction {
	if !strings.HasPrefix(target, "key:") {
		target = "app:" + target
	}
	return history.AdminAction{Action: action, Target: target, Detail: detail + "; by " + actor}
}

// withChange records what a change made of its target: before and after.
func withChange(a history.AdminAction, before, after string) history.AdminAction {
	a.Before, a.After = before, after
	return a
}

// describe sums an app's settings up for the audit log.
func describe(a otp.App) string {
	types := "default"
	if a.DeniedNumberTypes != nil {
		types = fmt.Sprint(*a.DeniedNumberTypes)
	}
	return fmt.Sprintf("name %q; code_length %d; code_ttl %s; max_sends %d; max_attempts %d; locales %v; allowed_countries %v; channels %v; send_rules %s; check_rules %s; access %s; denied_number_types %s; allowed_origins %v; token_ttl %s; token_address %s",
		a.Name, a.CodeLength, a.CodeTTL, a.MaxSends, a.MaxAttempts, a.Locales, a.AllowedCountries, a.Channels, a.SendRules, a.CheckRules, a.Access, types,
		a.AllowedOrigins, a.TokenTTL, a.TokenAddress)
}

// Info is an app with its keys, for the admin console and API.
type Info struct {
	App  otp.App
	Keys []Key
}

// NewKey asks for a key.
type NewKey struct {
	Name            string
	TrustedClientIP bool
}

// CreatedKey is a key just made, with its secret: the only time the secret is shown.
type CreatedKey struct {
	Key    Key
	Secret string
}

// AdminService manages apps and keys for the admin console and API; *Admin implements
// it. actor names who acts, for the audit log.
type AdminService interface {
	// ListApps returns every app, the default one first, with its keys.
	ListApps(ctx context.Context) ([]Info, error)
	// GetApp returns one app with its keys. Errors: otp.ErrNotFound.
	GetApp(ctx context.Context, id string) (Info, error)
	// CreateApp makes an app: the patch over the default app's settings.
	// Errors: *otp.ErrInvalidRequest.
	CreateApp(ctx context.Context, p Patch, actor string) (Info, error)
	// UpdateApp changes an app. Errors: otp.otp.ErrNotFound, *otp.ErrInvalidRequest (also for the
	// default app, whose settings come from the environment).
	UpdateApp(ctx context.Context, id string, p Patch, actor string) (Info, error)
	// DeleteApp deletes an app and revokes its keys. Errors: otp.ErrNotFound,
	// *otp.ErrInvalidRequest for the default app.
	DeleteApp(ctx context.Context, id, actor string) error
	// CreateKey makes a key for an app. Errors: otp.otp.ErrNotFound, *otp.ErrInvalidRequest.
	CreateKey(ctx context.Context, appID string, k NewKey, actor string) (CreatedKey, error)
	// RevokeKey revokes a key of an app. Errors: otp.ErrNotFound.
	RevokeKey(ctx context.Context, appID, keyID, actor string) error
	// TestNumbers lists an app's test numbers, expired ones included, newest first.
	// Errors: otp.ErrNotFound.
	TestNumbers(ctx context.Context, appID string) ([]TestNumberInfo, error)
	// AddTestNumber adds a test number to an app; one of the same address that expired is
	// replaced. Errors: otp.ErrNotFound, *otp.ErrInvalidRequest naming address (also for
	// an address the app has a working test number at), code or expires_at.
	AddTestNumber(ctx context.Context, appID string, n NewTestNumber, actor string) (TestNumberInfo, error)
	// RemoveTestNumber removes a test number of an app. Errors: otp.ErrNotFound.
	RemoveTestNumber(ctx context.Context, appID, id, actor string) (TestNumberInfo, error)
}
