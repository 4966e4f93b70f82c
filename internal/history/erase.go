package history

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// ActionSubjectErased is the erasure of one person's data (Eraser.Erase).
const ActionSubjectErased = "subject_erased"

// Erased counts what one erasure removed, per kind.
type Erased struct {
	// Verifications, Sends and Attempts are history rows deleted; Sends counts refused
	// sends (which belong to no verification) too, and the delivery receipts they held.
	Verifications, Sends, Attempts int
	// Events are event outbox rows deleted, each with its webhook delivery record.
	Events int
	// AuditEntries are earlier audit entries whose target named the address, rewritten to
	// name its mask instead.
	AuditEntries int
	// FraudBlocks are fraud blocks whose reason named the address as the send that tripped
	// them (as versions before masking wrote it), rewritten to name its mask, with the
	// block's events; their audit entries count in AuditEntries.
	FraudBlocks int
	// LimiterKeys are the limiter keys of the address that held something and were deleted.
	LimiterKeys int
	// Replays are stored Idempotency-Key responses naming the address that were deleted.
	Replays int
}

// EraseStore removes one person's history; both stores implement it.
type EraseStore interface {
	// EraseAddress deletes, in one transaction with the audit entry, every verification
	// of address in every app with its sends, attempts and events (their delivery
	// records too), and the refused sends of address; audit entries whose target is
	// "phone:<address>" or "email:<address>" are rewritten to name redacted instead, and
	// fraud blocks whose reason names address as the send that tripped them
	// (fraud.TrippedBy) name the mask of redacted ("phone:<mask>") instead, in the block,
	// its audit entry and its events.
	// Rollups hold counts only and are left as they are. Errors: *otp.ErrInvalidText,
	// and errors wrapping otp.ErrUnavailable.
	EraseAddress(ctx context.Context, address, redacted string, audit AdminAction) (Erased, error)
}

// Eraser is the audited erasure of one person's data, by phone number or email address:
// the store's rows, the limiter's keys of every partition of the address, and what other
// parts keep of it (Forget). What it removes cannot be brought back.
type Eraser struct {
	store   EraseStore
	limiter otp.Limiter
	// mask is what names the address in the audit log (pii.Mask): not the address, and
	// not its index either, which would let the log find the person again.
	mask func(address string) string
	// keys lists the limiter keys of an address in every scope and partition (only their
	// Scope and Key are read).
	keys func(address string) []rate.Limit

	// LimiterTimeout bounds one limiter call.
	LimiterTimeout time.Duration
	// Replays, when set, deletes the stored Idempotency-Key responses that name the
	// address and says how many it deleted.
	Replays func(ctx context.Context, address string) (int, error)
	// Forget, when set, drops what this instance's caches hold of the address.
	Forget func(address string)
}

// NewEraser returns the eraser over store and limiter: mask names an address in the
// audit log (pii.Mask), keys lists the limiter keys of an address.
func NewEraser(store EraseStore, limiter otp.Limiter, mask func(string) string, keys func(string) []rate.Limit) *Eraser {
	return &Eraser{store: store, limiter: limiter, mask: mask, keys: keys}
}

// Erase removes everything otpgate keeps of address, a normalised E.164 number or email
// address, and audits it under the address's mask, so that the audit log does not
// name the person it erased. The store's part runs first, in one transaction with its
// audit entry; then the limiter keys, the stored responses and the caches, which a
// failure leaves for a retry of the same call to finish (the store's part finds nothing
// the second time). Errors wrap otp.ErrUnavailable when a store or Redis fails.
func (e *Eraser) Erase(ctx context.Context, address, actor string) (Erased, error) {
	kind := "phone"
	if contact.IsEmailAddress(address) {
		kind = "email"
	}
	redacted := kind + ":" + e.mask(address)
	// What was kept is gone, so Before names whose it was (masked) and After is empty.
	out, err := e.store.EraseAddress(ctx, address, redacted, AdminAction{
		Action: ActionSubjectErased,
		Target: redacted,
		Detail: "by " + actor,
		Before: Change(map[string]string{"subject": redacted}),
	}.Stamp(ctx))
	if err != nil {
		return Erased{}, fmt.Errorf("history: erase: %w", err)
	}
	for _, k := range e.keys(address) {
		lctx, cancel := otp.Bounded(ctx, e.LimiterTimeout)
		states, err := e.limiter.Inspect(lctx, rate.Limit{Scope: k.Scope, Key: k.Key, Rules: []rate.Rule{everything()}})
		if err == nil {
			err = e.limiter.Reset(lctx, k.Scope, k.Key)
		}
		cancel()
		if err != nil {
			return out, fmt.Errorf("history: erase: limiter %s: %w", k.Scope, err)
		}
		if held(states) {
			out.LimiterKeys++
		}
	}
	if e.Replays != nil {
		n, err := e.Replays(ctx, address)
		if err != nil {
			return out, fmt.Errorf("history: erase: stored responses: %w", err)
		}
		out.Replays = n
	}
	if e.Forget != nil {
		e.Forget(address)
	}
	return out, nil
}

// everything is a rule whose window reaches back past any rule's, for telling whether a
// key held anything before it is deleted.
func everything() rate.Rule { return rate.Rule{Limit: 1 << 30, Window: 400 * 24 * time.Hour} }

// held reports whether an inspected key held any request.
func held(states []rate.RuleState) bool {
	for _, s := range states {
		if s.Used > 0 {
			return true
		}
	}
	return false
}

// ErrNotAnAddress is returned by ParseSubject for a value that is neither.
var ErrNotAnAddress = errors.New("must be an E.164 phone number (such as +14155550100) or an email address")

// ParseSubject reads the subject of an erasure: an email address, normalised as sends
// normalise it, or a phone number in E.164 form with its leading +.
func ParseSubject(raw string) (string, error) {
	if contact.IsEmailAddress(raw) {
		a, err := contact.NormalizeEmail(raw)
		if err != nil {
			return "", ErrNotAnAddress
		}
		return a, nil
	}
	if len(raw) < 2 || raw[0] != '+' {
		return "", ErrNotAnAddress
	}
	if _, err := strconv.ParseUint(raw[1:], 10, 64); err != nil {
		return "", ErrNotAnAddress
	}
	e164, _, err := contact.NormalizePhone(raw, "")
	if err != nil {
		return "", ErrNotAnAddress
	}
	return e164, nil
}
