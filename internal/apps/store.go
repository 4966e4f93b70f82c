package apps

import (
	"context"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// Set is every live app and key, as one consistent read of the store.
type Set struct {
	// Version grows with every change (the version of SettingName); a reloader compares it
	// to its own.
	Version int64
	Apps    []otp.App
	Keys    []Key
	// TestNumbers are the test numbers of every app (the default one's too) that had not
	// expired at the read.
	TestNumbers []TestNumber
}

// SettingName is the live setting (internal/settings) whose version every change of apps,
// keys and test numbers moves on; they stay in tables of their own, so it holds no document.
const SettingName = "apps"

// Store keeps apps and their keys. Every change is audited in the same
// transaction, so nothing is half-written. Implementations: internal/postgres and
// internal/inmem; appstest holds the behaviour both must share.
type Store interface {
	// LoadApps reads every app that is not deleted and every key that is not revoked.
	LoadApps(ctx context.Context) (Set, error)
	// SettingVersion(SettingName) is the version LoadApps would return now: cheap, for
	// polling (settings.Store).
	SettingVersion(ctx context.Context, name string) (int64, error)
	// AppByID returns one app that is not deleted. Errors: otp.ErrNotFound.
	AppByID(ctx context.Context, id string) (otp.App, error)
	// AppKeys lists an app's keys, revoked ones included, oldest first.
	AppKeys(ctx context.Context, appID string) ([]Key, error)
	// CreateApp stores a new app. Errors: *otp.ErrInvalidRequest from otp.App.Validate.
	CreateApp(ctx context.Context, a otp.App, audit history.AdminAction) error
	// UpdateApp replaces the settings of an app that is not deleted.
	// Errors: otp.ErrNotFound, *otp.ErrInvalidRequest from otp.App.Validate.
	UpdateApp(ctx context.Context, a otp.App, audit history.AdminAction) error
	// DeleteApp marks an app deleted, revokes its keys and deletes its webhook endpoints with
	// their deliveries; its history stays.
	// Errors: otp.ErrNotFound.
	DeleteApp(ctx context.Context, id string, at time.Time, audit history.AdminAction) error
	// CreateKey stores a new key of an app.
	CreateKey(ctx context.Context, k Key, audit history.AdminAction) error
	// RevokeKey revokes a live key of the app. Errors: otp.ErrNotFound.
	RevokeKey(ctx context.Context, appID, keyID string, at time.Time, audit history.AdminAction) error
	// TouchKeys records when keys were last used; it changes no version. Unknown keys are skipped.
	TouchKeys(ctx context.Context, used map[string]time.Time) error
	// TestNumbers lists an app's test numbers, expired ones included, newest first.
	TestNumbers(ctx context.Context, appID string) ([]TestNumber, error)
	// CreateTestNumber stores a test number and bumps the version; one of the same app
	// and address that expired by t.CreatedAt is replaced. Errors: *otp.ErrInvalidRequest
	// naming address when the app has a working one there.
	CreateTestNumber(ctx context.Context, t TestNumber, audit history.AdminAction) error
	// DeleteTestNumber removes a test number of the app, bumps the version and returns it.
	// Errors: otp.ErrNotFound.
	DeleteTestNumber(ctx context.Context, appID, id string, audit history.AdminAction) (TestNumber, error)
}

// Audit log actions of apps and keys.
const (
	ActionAppCreate = "app_create"
	ActionAppUpdate = "app_update"
	ActionAppDelete = "app_delete"
	ActionKeyCreate = "key_create"
	ActionKeyRevoke = "key_revoke"
)
