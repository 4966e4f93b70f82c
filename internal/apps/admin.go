package apps

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"otpgate/internal/otp"
)

// maxKeyName bounds a key's name.
const maxKeyName = 64

// Admin implements otp.AppAdmin: every change is validated by otp.App.Validate, written
// with its audit entry in one store transaction, and applied to this instance's
// registry at once; the other instances follow within their poll interval.
type Admin struct {
	store    otp.AppStore
	registry *Registry

	// Now is the clock of created, updated and revoked times; tests replace it.
	Now func() time.Time
	// NewID makes app ids; tests replace it.
	NewID func() string
}

var _ otp.AppAdmin = (*Admin)(nil)

// NewAdmin returns the admin service over store, keeping registry current.
func NewAdmin(store otp.AppStore, registry *Registry) *Admin {
	return &Admin{
		store: store, registry: registry,
		Now:   func() time.Time { return time.Now().UTC() },
		NewID: func() string { return uuid.Must(uuid.NewV7()).String() },
	}
}

// ListApps implements otp.AppAdmin.
func (a *Admin) ListApps(ctx context.Context) ([]otp.AppInfo, error) {
	set, err := a.store.LoadApps(ctx)
	if err != nil {
		return nil, fmt.Errorf("apps: list: %w", err)
	}
	all := append([]otp.App{a.registry.DefaultApp()}, set.Apps...)
	out := make([]otp.AppInfo, len(all))
	for i, app := range all {
		keys, err := a.store.AppKeys(ctx, app.ID)
		if err != nil {
			return nil, fmt.Errorf("apps: list keys: %w", err)
		}
		out[i] = otp.AppInfo{App: app, Keys: keys}
	}
	return out, nil
}

// GetApp implements otp.AppAdmin; it reads the store, not the snapshot, so the admin
// sees a change at once.
func (a *Admin) GetApp(ctx context.Context, id string) (otp.AppInfo, error) {
	app, err := a.app(ctx, id)
	if err != nil {
		return otp.AppInfo{}, err
	}
	keys, err := a.store.AppKeys(ctx, app.ID)
	if err != nil {
		return otp.AppInfo{}, fmt.Errorf("apps: keys: %w", err)
	}
	return otp.AppInfo{App: app, Keys: keys}, nil
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

// CreateApp implements otp.AppAdmin: unset fields take the default app's settings,
// except its name, which a new app must have.
func (a *Admin) CreateApp(ctx context.Context, p otp.AppPatch, actor string) (otp.AppInfo, error) {
	base := a.registry.DefaultApp()
	base.Name, base.Default = "", false
	now := a.Now().Truncate(time.Microsecond)
	base.ID, base.CreatedAt, base.UpdatedAt = a.NewID(), now, now
	app, err := p.Apply(base)
	if err != nil {
		return otp.AppInfo{}, err
	}
	if err := a.store.CreateApp(ctx, app, audit(otp.ActionAppCreate, app.ID, describe(app), actor)); err != nil {
		return otp.AppInfo{}, fmt.Errorf("apps: create: %w", err)
	}
	a.refresh(ctx)
	return otp.AppInfo{App: app}, nil
}

// UpdateApp implements otp.AppAdmin.
func (a *Admin) UpdateApp(ctx context.Context, id string, p otp.AppPatch, actor string) (otp.AppInfo, error) {
	old, err := a.app(ctx, id)
	if err != nil {
		return otp.AppInfo{}, err
	}
	if old.Default {
		return otp.AppInfo{}, errDefaultReadOnly
	}
	old.UpdatedAt = a.Now().Truncate(time.Microsecond)
	app, err := p.Apply(old)
	if err != nil {
		return otp.AppInfo{}, err
	}
	if err := a.store.UpdateApp(ctx, app, audit(otp.ActionAppUpdate, app.ID, describe(app), actor)); err != nil {
		return otp.AppInfo{}, fmt.Errorf("apps: update: %w", err)
	}
	a.refresh(ctx)
	return a.GetApp(ctx, app.ID)
}

// DeleteApp implements otp.AppAdmin.
func (a *Admin) DeleteApp(ctx context.Context, id, actor string) error {
	app, err := a.app(ctx, id)
	if err != nil {
		return err
	}
	if app.Default {
		return errDefaultReadOnly
	}
	if err := a.store.DeleteApp(ctx, app.ID, a.Now(), audit(otp.ActionAppDelete, app.ID, "name "+app.Name, actor)); err != nil {
		return fmt.Errorf("apps: delete: %w", err)
	}
	a.refresh(ctx)
	return nil
}

// CreateKey implements otp.AppAdmin.
func (a *Admin) CreateKey(ctx context.Context, appID string, nk otp.NewKey, actor string) (otp.CreatedKey, error) {
	app, err := a.app(ctx, appID)
	if err != nil {
		return otp.CreatedKey{}, err
	}
	name := strings.TrimSpace(nk.Name)
	if utf8.RuneCountInString(name) > maxKeyName || strings.ContainsAny(name, "\r\n\t") {
		return otp.CreatedKey{}, &otp.ErrInvalidRequest{Fields: map[string]string{"name": fmt.Sprintf("must be one line of at most %d characters", maxKeyName)}}
	}
	id, secret, hash := newSecret()
	k := otp.AppKey{ID: id, AppID: app.ID, Name: name, Hash: hash, TrustedClientIP: nk.TrustedClientIP, CreatedAt: a.Now().Truncate(time.Microsecond)}
	detail := fmt.Sprintf("app %s; name %q; trusted_client_ip %v", app.ID, name, nk.TrustedClientIP)
	if err := a.store.CreateKey(ctx, k, audit(otp.ActionKeyCreate, "key:"+id, detail, actor)); err != nil {
		return otp.CreatedKey{}, fmt.Errorf("apps: create key: %w", err)
	}
	a.refresh(ctx)
	return otp.CreatedKey{Key: k, Secret: secret}, nil
}

// RevokeKey implements otp.AppAdmin.
func (a *Admin) RevokeKey(ctx context.Context, appID, keyID, actor string) error {
	app, err := a.app(ctx, appID)
	if err != nil {
		return err
	}
	if err := a.store.RevokeKey(ctx, app.ID, keyID, a.Now(), audit(otp.ActionKeyRevoke, "key:"+keyID, "app "+app.ID, actor)); err != nil {
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

func audit(action, target, detail, actor string) otp.AdminAction {
	if !strings.HasPrefix(target, "key:") {
		target = "app:" + target
	}
	return otp.AdminAction{Action: action, Target: target, Detail: detail + "; by " + actor}
}

// describe sums an app's settings up for the audit log.
func describe(a otp.App) string {
	return fmt.Sprintf("name %q; code_length %d; code_ttl %s; max_sends %d; max_attempts %d; locales %v; allowed_countries %v; channels %v; send_rules %s; check_rules %s; access %s",
		a.Name, a.CodeLength, a.CodeTTL, a.MaxSends, a.MaxAttempts, a.Locales, a.AllowedCountries, a.Channels, a.SendRules, a.CheckRules, a.Access)
}
