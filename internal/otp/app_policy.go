package otp

import "strings"

// Scopes of an app's own rules. Their keys are "<app id>|<E.164 phone>", so each app
// counts its own sends and checks per phone on top of the shared scopes, which every
// app pays into alike.
const (
	ScopeApp      = "app"
	ScopeAppCheck = "app_check"
)

// appSendPolicy adds the app's own send rules to the shared policy. The duplicate
// window is the app's own, too: the same phone asked for by two apps is no double
// submit. The default app's keys stay as they were before there were apps.
func appSendPolicy(app App, address string, shared []Limit) []Limit {
	for i := range shared {
		if shared[i].Scope == ScopeDuplicate && !app.Default {
			shared[i].Key = app.ID + "|" + shared[i].Key
		}
	}
	if len(app.SendRules) == 0 {
		return shared
	}
	return append(shared, Limit{Scope: ScopeApp, Key: app.ID + "|" + address, Rules: app.SendRules})
}

// appCheckLimits are the app's own check rules for phone; none when the phone is
// unknown (a check by an id that names nothing).
func appCheckLimits(app App, phone string) []Limit {
	if len(app.CheckRules) == 0 || phone == "" {
		return nil
	}
	return []Limit{{Scope: ScopeAppCheck, Key: app.ID + "|" + phone, Rules: app.CheckRules}}
}

// quoteOr lists values for an error message, such as `"en" or "ja"`.
func quoteOr(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = `"` + v + `"`
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
