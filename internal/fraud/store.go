package fraud

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/settings"
)

// SettingName is the live setting (internal/settings) that holds the fraud guard's
// settings by name as text, and whose version every change of them or of the lists moves on.
const SettingName = "fraud"

// Store keeps the fraud configuration, the lists and the blocks. Implementations:
// internal/postgres (production) and internal/inmem (dev mode); fraudtest holds the
// behaviour both must share. The settings are the live setting SettingName, written through
// SeedConfig and UpdateConfig; a change of the lists moves its version on too. Every change
// writes its audit entry in the same transaction: a change that cannot be audited is not made.
type Store interface {
	settings.Store
	// FraudState returns the stored settings (nil when none were ever stored), every list
	// entry (oldest first) and the version of SettingName, in one consistent read.
	FraudState(ctx context.Context) (State, error)
	// AddFraudListEntry adds an entry (ID and CreatedAt are set), audits it and bumps the
	// version. Errors: *otp.ErrInvalidRequest naming "value" when the list has it already.
	AddFraudListEntry(ctx context.Context, e ListEntry, a history.AdminAction) (ListEntry, error)
	// DeleteFraudListEntry removes an entry, audits it and bumps the version, and returns it.
	// Errors: otp.ErrNotFound.
	DeleteFraudListEntry(ctx context.Context, id int64, a history.AdminAction) (ListEntry, error)
	// RecordFraudBlock stores a block the guard started, with its audit entry.
	RecordFraudBlock(ctx context.Context, b Block, a history.AdminAction) error
	// FraudBlocks returns blocks, newest first: those active at f.Now, or all of them.
	FraudBlocks(ctx context.Context, f BlockFilter) ([]Block, error)
	// LiftFraudBlock marks a block lifted at at by by, unless it was lifted before, audits
	// the lift, and returns the block as it then is. Errors: otp.ErrNotFound.
	LiftFraudBlock(ctx context.Context, id string, at time.Time, by string, a history.AdminAction) (Block, error)
	// FraudConversion counts, per prefix of drop digits less than the number, the sends
	// since since that went out (sent or sending), those refused as blocked, and the
	// approvals of verifications created since since.
	FraudConversion(ctx context.Context, since time.Time, drop int) ([]PrefixCount, error)
	// ShadowSends returns the newest sends that shadow rules or a shadow guard flagged, at
	// most history.AdminActionLimit(limit).
	ShadowSends(ctx context.Context, limit int) ([]history.SendRow, error)
	// ChallengedSends returns the newest sends the guard refused for want of a challenge
	// or admitted on a solved one (Fraud.Action challenged or passed), at most
	// history.AdminActionLimit(limit).
	ChallengedSends(ctx context.Context, limit int) ([]history.SendRow, error)
	// AdminActions returns the newest audit entries first, as history.Store does.
	AdminActions(ctx context.Context, limit int) ([]history.AdminAction, error)
}

// State is what a Store holds of the fraud configuration.
type State struct {
	// Values are the stored settings by name; nil when none were ever stored.
	Values  map[string]string
	Entries []ListEntry
	Version int64
}

// Block is one block a guard trip started: a row in the store, while the limiter holds
// the block itself.
type Block struct {
	ID string
	// Scope and Target name the blocked target, such as "prefix" and "+8190123".
	Scope, Target string
	// Mode is ModeShadow for a block that only reports.
	Mode Mode
	// Reason says what tripped it in one line, naming the figures.
	Reason string
	// Why is the explanation of the trip; nil for blocks stored before explanations.
	Why       *rate.FraudExplanation
	StartedAt time.Time
	EndsAt    time.Time
	// LiftedAt is when an operator lifted it (zero if nobody did), LiftedBy who.
	LiftedAt time.Time
	LiftedBy string
}

// Active reports whether the block still holds at now.
func (b Block) Active(now time.Time) bool { return b.LiftedAt.IsZero() && now.Before(b.EndsAt) }

// BlockFilter selects blocks.
type BlockFilter struct {
	// All lists ended and lifted blocks too; otherwise only those active at Now.
	All bool
	Now time.Time
	// Limit, when positive, caps the answer at history.AdminActionLimit(Limit).
	Limit int
}

// PrefixCount is one prefix's line of FraudConversion.
type PrefixCount struct {
	Prefix                    string
	Sends, Blocked, Approvals int
}

// Audit actions of the fraud guard.
const (
	ActionConfigChanged = "fraud_config_changed"
	ActionListAdded     = "fraud_list_added"
	ActionListRemoved   = "fraud_list_removed"
	ActionBlockStarted  = "fraud_block_started"
	ActionBlockLifted   = "fraud_block_lifted"
)

// Counter is what the guard needs of the limiter besides decisions: counting approvals and
// lifting blocks. internal/ratelimit implements it.
type Counter interface {
	// Approve counts one approval for the guards of the targets. Errors wrap otp.ErrUnavailable.
	Approve(ctx context.Context, targets []rate.Limit, weight float64) error
	// Lift ends the block of one target and forgets its recent counts. Errors wrap otp.ErrUnavailable.
	Lift(ctx context.Context, scope, key string) error
}

// SeedConfig stores values as the settings when none are stored yet, without a new
// version; it reports whether it stored them. Errors: *otp.ErrInvalidText.
func SeedConfig(ctx context.Context, store settings.Store, values map[string]string) (bool, error) {
	doc, err := encodeValues(values)
	if err != nil {
		return false, err
	}
	return store.SeedSetting(ctx, SettingName, doc)
}

// UpdateConfig calls update with the stored settings (nil when none) under the store's
// lock, stores what it returns, audits it and moves the version on, which it returns. An
// error from update is returned as it is, and nothing changes. Errors: *otp.ErrInvalidText.
func UpdateConfig(ctx context.Context, store settings.Store, update func(stored map[string]string) (map[string]string, history.AdminAction, error)) (int64, error) {
	return store.UpdateSetting(ctx, SettingName, func(doc []byte) ([]byte, history.AdminAction, error) {
		stored, err := DecodeValues(doc)
		if err != nil {
			return nil, history.AdminAction{}, err
		}
		values, a, err := update(stored)
		if err != nil {
			return nil, history.AdminAction{}, err
		}
		next, err := encodeValues(values)
		return next, a, err
	})
}

// DecodeValues reads the stored settings' document; nil (none stored) is nil.
func DecodeValues(doc []byte) (map[string]string, error) {
	if doc == nil {
		return nil, nil
	}
	var values map[string]string
	if err := json.Unmarshal(doc, &values); err != nil {
		return nil, fmt.Errorf("fraud: stored settings: %w", err)
	}
	return values, nil
}

// encodeValues is the document of values, whose text is checked first: JSON would replace
// invalid UTF-8 rather than refuse it.
func encodeValues(values map[string]string) ([]byte, error) {
	if err := otp.CheckTextIn("values", values); err != nil {
		return nil, err
	}
	return json.Marshal(values)
}
