package http

import (
	"context"
	"fmt"
	"strings"

	"otpgate/internal/otp"
)

// adminActionLimitReset is the audit log's name for a reset from the console or the API.
const adminActionLimitReset = "limit_reset"

// adminLimits inspects and resets the limiter state of one phone or client IP.
type adminLimits struct {
	limiter otp.Limiter
	history otp.HistoryStore
	// rules are the configured rules per scope.
	rules map[string][]otp.Rule
}

func newAdminLimits(d AdminDeps) adminLimits {
	rules := map[string][]otp.Rule{}
	for _, l := range d.Limits {
		rules[l.Scope] = append(rules[l.Scope], l.Rules...)
	}
	return adminLimits{limiter: d.Limiter, history: d.History, rules: rules}
}

// inspect reports every configured rule of the target's scopes without recording anything.
func (a adminLimits) inspect(ctx context.Context, t limitTarget) ([]otp.RuleState, error) {
	var out []otp.RuleState
	for _, scope := range t.scopes() {
		rules := a.rules[scope]
		if len(rules) == 0 {
			continue
		}
		states, err := a.limiter.Inspect(ctx, otp.Limit{Scope: scope, Key: t.Key, Rules: rules})
		if err != nil {
			return nil, fmt.Errorf("admin: inspect %s: %w", scope, err)
		}
		out = append(out, states...)
	}
	return out, nil
}

// reset forgets what the limiter recorded for the target in all its scopes, also
// those without configured rules, so nothing left from an earlier configuration
// survives. The audit entry is written first: an action that cannot be audited is not
// done. The duplicate window is keyed by phone and client together and is not reset;
// it lasts seconds.
func (a adminLimits) reset(ctx context.Context, t limitTarget, actor string) error {
	scopes := t.scopes()
	err := a.history.RecordAdminAction(ctx, otp.AdminAction{
		Action: adminActionLimitReset,
		Target: t.String(),
		Detail: "scopes " + strings.Join(scopes, ", ") + "; by " + actor,
	})
	if err != nil {
		return fmt.Errorf("admin: audit reset: %w", err)
	}
	for _, scope := range scopes {
		if err := a.limiter.Reset(ctx, scope, t.Key); err != nil {
			return fmt.Errorf("admin: reset %s: %w", scope, err)
		}
	}
	return nil
}
