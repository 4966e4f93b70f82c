package otp

import (
	"otpgate/internal/rate"
)

// Scopes of an app's own rules. Their keys are "<app id>|<index of the address>"
// (Config.Index), so each app
// counts its own sends and checks per phone on top of the shared scopes, which every
// app pays into alike.
const (
	ScopeApp      = "app"
	ScopeAppCheck = "app_check"
)

// keyPartition is the key prefix of the per-address scopes that every app with key
// access shares.
const keyPartition = "key|"

// AddressKey is the key address has in the per-address scopes (phone, email,
// check_phone, check_email) for calls of app: its partition of the address's budget.
// Apps with key access share one partition ("key|<address>"): their callers are
// authenticated, and a number costs the same whichever of them asks. Every app without
// a key has a partition of its own, so that no unauthenticated caller can spend what
// protects another app's users: the public default app keeps the key it had before
// there were apps (the bare address), any other public app has "<app id>|<address>".
func AddressKey(app App, address string) string {
	switch {
	case app.Access == AccessKey:
		return keyPartition + address
	case app.Default:
		return address
	}
	return app.ID + "|" + address
}

// appSendPolicy adds the app's own send rules to the shared policy and keys the
// per-address scope in the app's partition (AddressKey). The duplicate window is the
// app's own, too: the same phone asked for by two apps is no double submit. The default
// app's duplicate keys stay as they were before there were apps.
// The per-address keys are of index, the address's Config.Index.
func appSendPolicy(app App, index string, shared []rate.Limit) []rate.Limit {
	for i := range shared {
		switch shared[i].Scope {
		case ScopeDuplicate:
			if !app.Default {
				shared[i].Key = app.ID + "|" + shared[i].Key
			}
		case ScopePhone, ScopeEmail:
			shared[i].Key = AddressKey(app, index)
		}
	}
	if len(app.SendRules) == 0 {
		return shared
	}
	return append(shared, rate.Limit{Scope: ScopeApp, Key: app.ID + "|" + index, Rules: app.SendRules})
}

// appCheckLimits are the app's own check rules for the address whose index is given; none
// when the address is unknown (a check by an id that names nothing).
func appCheckLimits(app App, index string) []rate.Limit {
	if len(app.CheckRules) == 0 || index == "" {
		return nil
	}
	return []rate.Limit{{Scope: ScopeAppCheck, Key: app.ID + "|" + index, Rules: app.CheckRules}}
}
