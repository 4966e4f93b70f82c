package twilioapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// The account credential. Twilio authenticates account-level resources (Services,
// Attempts) with the account's SID and Auth Token; otpgate has no accounts, so HTTP
// Basic with any account SID ("AC" and 32 hex digits) as the user and the account
// token (OTP_ACCOUNT_TOKEN) as the password stands for the account: it reaches every
// account-level resource and every service's resources. An app key reaches its own
// service only, and may read, never change, its Service resource.

// accountKeyID is the key id a caller with the account credential is known by.
const accountKeyID = "account"

// errAccountOnly refuses an app key where only the account credential will do.
var errAccountOnly = otp.Errorf(otp.CodeUnauthorized, "this resource needs the account's credentials")

// isAccount reports whether the caller holds the account credential.
func isAccount(k apps.Key) bool { return k.ID == accountKeyID && k.AppID == "" }

// mayCall refuses a caller the app's resources unless it may use them: the account may use
// every app's, a key its own app's (apps.Authorize); nobody an app that is off. Errors:
// otp.ErrAppOff for an app that is off, which says why to everyone as the native API does
// (docs/apps.md); errNoService otherwise, as for a service of another account.
func mayCall(app otp.App, k apps.Key) error {
	switch {
	case app.Access == otp.AccessOff:
		return otp.ErrAppOff
	case isAccount(k) || apps.Authorize(app, k) == nil:
		return nil
	}
	return errNoService
}

// caller authenticates HTTP Basic credentials: the account credential when the user is
// an account SID, else an app key. The token is compared by its SHA-256 with
// subtle.ConstantTimeCompare, so timing tells nothing of it; an unset token refuses
// every account SID. Errors: apps.ErrBadKey.
func caller(ctx context.Context, d Deps, user, pass string) (apps.Key, error) {
	if hex, ok := strings.CutPrefix(user, "AC"); ok && len(hex) == 32 && isHex(hex) {
		got, want := sha256.Sum256([]byte(pass)), sha256.Sum256([]byte(d.AccountToken))
		if d.AccountToken == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return apps.Key{}, apps.ErrBadKey
		}
		return apps.Key{ID: accountKeyID}, nil
	}
	k, err := d.Apps.Authenticate(ctx, user, pass)
	if err != nil {
		return apps.Key{}, err
	}
	return k, nil
}

func isHex(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'f') && (r < 'A' || r > 'F')
	}) < 0
}

// authenticateAccount guards the account-level resources: HTTP Basic with the account
// credential or an app key (what a key may do there each handler decides). The caller
// goes into the request's context.
func authenticateAccount(d Deps) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, pass, ok := r.BasicAuth()
			var key apps.Key
			var err error = apps.ErrBadKey
			if ok {
				key, err = caller(r.Context(), d, user, pass)
			}
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Basic realm="otpgate"`)
				writeError(w, r, d.Logger, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), accountCallKey, key)))
		})
	}
}

// accountCallKey keys the caller of an account-level resource in its context.
const accountCallKey callCtxKey = 1

// accountCaller is the caller authenticateAccount found.
func accountCaller(ctx context.Context) apps.Key {
	k, _ := ctx.Value(accountCallKey).(apps.Key)
	return k
}

// audited returns ctx naming the caller as the actor of the audit log's entries.
func audited(ctx context.Context, k apps.Key) context.Context {
	name := k.ID
	if isAccount(k) {
		name = "account credential"
	}
	return history.WithActor(ctx, history.Actor{Kind: history.ActorAppKey, Name: name, ID: k.ID})
}

// actor names the caller in the audit log.
func actor(k apps.Key) string {
	if isAccount(k) {
		return "twilio api (account credential)"
	}
	return "twilio api (key " + k.ID + ")"
}
