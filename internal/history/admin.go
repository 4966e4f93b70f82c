package history

import (
	"context"
	"fmt"
	"strings"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/rate"
)

// LimitTarget is what the console inspects and resets: a phone or a client IP.
type LimitTarget struct {
	// Kind is TargetPhone or TargetIP.
	Kind string
	// Key is the E.164 phone or the client IP as the limiter keys it.
	Key string
}

// Kinds of LimitTarget.
const (
	TargetPhone = "phone"
	TargetIP    = "ip"
)

// String names the target, such as "phone:+819012345678"; the audit log names it Masked.
func (t LimitTarget) String() string { return t.Kind + ":" + t.Key }

// Masked is the target as the audit log names it: a phone number masked (pii.Mask), an
// address as it is.
func (t LimitTarget) Masked() string {
	if t.Kind == TargetPhone {
		return t.Kind + ":" + pii.Mask(t.Key)
	}
	return t.String()
}

// Scopes lists the limiter scopes the target is keyed in: its send scope, then its check scope.
func (t LimitTarget) Scopes() []string {
	if t.Kind == TargetPhone {
		return []string{otp.ScopePhone, otp.ScopeCheckPhone}
	}
	return []string{otp.ScopeIP, otp.ScopeCheckIP}
}

// Admin answers the admin console: history, charts, and the limiter state of one
// phone or IP with its audited reset.
type Admin struct {
	history Store
	limiter otp.Limiter
	// rules are the configured rules per scope.
	rules map[string][]rate.Rule

	// Now is the clock of the charts; tests replace it.
	Now func() time.Time
	// LimiterTimeout bounds one limiter call, as for the public API.
	LimiterTimeout time.Duration
	// AddressKeys are the keys a phone has in its scopes, one per partition of its budget
	// (otp.AddressKey); nil: the phone alone, as when the default app is the only app.
	AddressKeys func(phone string) []string
}

// keys are the limiter keys of the target: every partition of a phone, an IP as it is.
func (a *Admin) keys(t LimitTarget) []string {
	if t.Kind == TargetPhone && a.AddressKeys != nil {
		return a.AddressKeys(t.Key)
	}
	return []string{t.Key}
}

// NewAdmin returns the admin service over history and limiter; limits are the
// configured send and check rules per scope (their Key is ignored).
func NewAdmin(history Store, limiter otp.Limiter, limits []rate.Limit) *Admin {
	rules := map[string][]rate.Rule{}
	for _, l := range limits {
		rules[l.Scope] = append(rules[l.Scope], l.Rules...)
	}
	return &Admin{history: history, limiter: limiter, rules: rules, Now: func() time.Time { return time.Now().UTC() }}
}

// ListSends implements AdminService.
func (a *Admin) ListSends(ctx context.Context, f SendFilter) ([]SendRow, *SendCursor, error) {
	return a.history.ListSends(ctx, f)
}

// Send implements AdminService.
func (a *Admin) Send(ctx context.Context, id string) (SendRow, error) {
	return a.history.Send(ctx, id)
}

// VerificationDetail implements AdminService.
func (a *Admin) VerificationDetail(ctx context.Context, id string) (VerificationDetail, error) {
	return a.history.VerificationDetail(ctx, id)
}

// Stats implements AdminService.
func (a *Admin) Stats(ctx context.Context, since time.Time, bucket time.Duration, appID string) ([]StatBucket, error) {
	return a.history.Stats(ctx, since, bucket, appID)
}

// DeliveryRates implements AdminService.
func (a *Admin) DeliveryRates(ctx context.Context, since time.Time, appID string) ([]DeliveryRate, error) {
	return a.history.DeliveryRates(ctx, since, appID)
}

// AdminActions implements AdminService.
func (a *Admin) AdminActions(ctx context.Context, limit int) ([]AdminAction, error) {
	return a.history.AdminActions(ctx, limit)
}

// AuditLog implements AdminService.
func (a *Admin) AuditLog(ctx context.Context, f AuditFilter) ([]AdminAction, error) {
	return a.history.AuditLog(ctx, f)
}

// Charts implements AdminService with one hourly Stats call: it starts at the first
// day's midnight, and hours add up into days because both start at whole multiples of
// their length since the Unix epoch.
func (a *Admin) Charts(ctx context.Context) (hours, days []StatBucket, err error) {
	const hour, day = time.Hour, 24 * time.Hour
	now := a.Now()
	since := now.Add(-6 * day)
	hours, err = a.history.Stats(ctx, BucketStart(since, day), hour, "")
	if err != nil {
		return nil, nil, err
	}
	perDay, err := NewStatCounter(since, now, day)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range hours {
		perDay.AddBucket(b)
	}
	return hours[max(len(hours)-24, 0):], perDay.Buckets(), nil
}

// Limits implements AdminService.
func (a *Admin) Limits(ctx context.Context, t LimitTarget) ([]rate.RuleState, error) {
	var out []rate.RuleState
	for _, scope := range t.Scopes() {
		rules := a.rules[scope]
		if len(rules) == 0 {
			continue
		}
		for _, key := range a.keys(t) {
			lctx, cancel := otp.Bounded(ctx, a.LimiterTimeout)
			states, err := a.limiter.Inspect(lctx, rate.Limit{Scope: scope, Key: key, Rules: rules})
			cancel()
			if err != nil {
				return nil, fmt.Errorf("otp: admin: inspect %s: %w", scope, err)
			}
			out = append(out, states...)
		}
	}
	return out, nil
}

// ResetLimits implements AdminService. It resets all the target's scopes, also those
// without configured rules, so nothing left from an earlier configuration survives. The
// audit entry is written first: an action that cannot be audited is not done. Its Before
// is what the configured rules had counted, its After the same rules at zero. The
// duplicate window is keyed by phone and client together and is not reset; it lasts seconds.
func (a *Admin) ResetLimits(ctx context.Context, t LimitTarget, actor string) error {
	scopes := t.Scopes()
	states, err := a.Limits(ctx, t)
	if err != nil {
		return err
	}
	before, after := map[string]int{}, map[string]int{}
	for _, st := range states {
		name := st.Scope + "/" + st.Rule.Window.String()
		before[name] += st.Used
		after[name] = 0
	}
	err = a.history.RecordAdminAction(ctx, AdminAction{
		Action: ActionLimitReset,
		Target: t.Masked(),
		Detail: "scopes " + strings.Join(scopes, ", ") + "; by " + actor,
		Before: Change(map[string]any{"used": before}),
		After:  Change(map[string]any{"used": after}),
	})
	if err != nil {
		return fmt.Errorf("otp: admin: audit reset: %w", err)
	}
	for _, scope := range scopes {
		for _, key := range a.keys(t) {
			lctx, cancel := otp.Bounded(ctx, a.LimiterTimeout)
			err := a.limiter.Reset(lctx, scope, key)
			cancel()
			if err != nil {
				return fmt.Errorf("otp: admin: reset %s: %w", scope, err)
			}
		}
	}
	return nil
}

// Record implements AdminService. The entry's actor is the call's (Stamp), filled by the store.
func (a *Admin) Record(ctx context.Context, act AdminAction) error {
	if err := a.history.RecordAdminAction(ctx, act); err != nil {
		return fmt.Errorf("otp: admin: audit %s: %w", act.Action, err)
	}
	return nil
}

// AdminService is what the admin console and its JSON API call; *Admin implements it.
type AdminService interface {
	// ListSends returns one page of history; see Store.ListSends.
	ListSends(ctx context.Context, f SendFilter) (rows []SendRow, next *SendCursor, err error)
	// Send returns one send by id. Errors: otp.ErrNotFound.
	Send(ctx context.Context, id string) (SendRow, error)
	// VerificationDetail returns a verification with its sends and attempts. Errors: otp.ErrNotFound.
	VerificationDetail(ctx context.Context, id string) (VerificationDetail, error)
	// Stats counts history per bucket, of one app or (appID "") all; see Store.Stats.
	Stats(ctx context.Context, since time.Time, bucket time.Duration, appID string) ([]StatBucket, error)
	// DeliveryRates counts sends and receipts per channel, country and provider; see DeliveryRater.
	DeliveryRates(ctx context.Context, since time.Time, appID string) ([]DeliveryRate, error)
	// Charts returns the last 24 hours per hour and the last 7 days per day, up to now.
	Charts(ctx context.Context) (hours, days []StatBucket, err error)
	// Limits reports every configured rule of the target's scopes without recording anything.
	// Errors wrap otp.ErrUnavailable.
	Limits(ctx context.Context, t LimitTarget) ([]rate.RuleState, error)
	// ResetLimits forgets what the limiter recorded for the target and audits it.
	// Errors wrap otp.ErrUnavailable; nothing is reset when the audit entry cannot be written.
	ResetLimits(ctx context.Context, t LimitTarget, actor string) error
	// Record writes one audit entry for a change the console makes through a service that
	// keeps no audit of its own (a TOTP enrolment made on the console). Errors: those of
	// AdminAction.Validate, and errors wrapping otp.ErrUnavailable.
	Record(ctx context.Context, a AdminAction) error
	// AdminActions returns the newest audit entries first, at most AdminActionLimit(limit).
	AdminActions(ctx context.Context, limit int) ([]AdminAction, error)
	// AuditLog returns the audit entries that pass f, newest first.
	AuditLog(ctx context.Context, f AuditFilter) ([]AdminAction, error)
}

var _ AdminService = (*Admin)(nil)
