// Package settings is the one mechanism for configuration that operators change at run
// time: a Store keeps one versioned JSON document per name, written with its audit entry,
// and a Reloader keeps each instance's immutable snapshot of a setting current, at once on
// a change notice and by polling the version otherwise. A feature that needs live
// configuration declares a name and the type its document decodes into; it writes no
// loop, table or version column of its own.
package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// Store keeps live settings by name: a JSON document and a version that every change
// moves on. Implementations: internal/postgres (one row per name of one table) and
// internal/inmem (dev mode). A name never written reads as no document at version 0.
type Store interface {
	// Setting returns the document stored under name (nil when none is stored) and the
	// version.
	Setting(ctx context.Context, name string) ([]byte, int64, error)
	// SettingVersion returns the version of name alone, cheaply, for polling.
	SettingVersion(ctx context.Context, name string) (int64, error)
	// SeedSetting stores doc under name when no document is stored there yet, without a
	// new version; it reports whether it stored it. Errors: *otp.ErrInvalidText (see
	// CheckDocument).
	SeedSetting(ctx context.Context, name string, doc []byte) (bool, error)
	// UpdateSetting calls update with the document stored under name (nil when none) under
	// a lock, stores what it returns, audits it and moves the version on, which it
	// returns. An error from update is returned as it is, and nothing changes. Errors:
	// *otp.ErrInvalidText (see CheckDocument).
	UpdateSetting(ctx context.Context, name string, update func(stored []byte) ([]byte, history.AdminAction, error)) (int64, error)
}

// Notifier tells every instance that a setting changed, for a push faster than polling.
// internal/notify implements it over Redis pub/sub, one channel per setting.
type Notifier interface {
	// Publish announces a change.
	Publish(ctx context.Context) error
	// Subscribe returns a channel that receives a value per announced change until ctx ends.
	Subscribe(ctx context.Context) (<-chan struct{}, error)
}

// CheckDocument refuses a document a store cannot keep as it was given: text that is not
// valid UTF-8 or holds a NUL anywhere (*otp.ErrInvalidText, as otp.CheckTextIn), or bytes
// that are not JSON at all (a bug of the caller, which encodes it).
func CheckDocument(doc []byte) error {
	if !utf8.Valid(doc) || bytes.IndexByte(doc, 0) >= 0 {
		return otp.CheckText("document", string(doc))
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("settings: the document is not JSON: %w", err)
	}
	return otp.CheckTextIn("document", v)
}
