package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"unicode"

	"otpgate/internal/history"
	"otpgate/internal/httpkit"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
)

// Errors of the admin listener's access control.
var (
	errUnauthorized = otp.Errorf(otp.CodeUnauthorized, "admin token missing or wrong")
	errCSRF         = otp.Errorf(otp.CodeCSRFFailed, "csrf check failed")
)

// adminAuth is how a request proved who it comes from.
type adminAuth int

const (
	authNone adminAuth = iota
	// authBasic is the browser's HTTP Basic login: the browser resends it on its own,
	// so state changes made with it need a CSRF token too.
	authBasic
	// authBearer is an API client's token, which no browser attaches by itself.
	authBearer
	// authSession is the console's single sign-on cookie, which the browser sends by
	// itself: state changes made with it need a CSRF token too.
	authSession
)

// adminCtxKey keys what requireAdmin hands to handlers.
type adminCtxKey int

const adminActorKey adminCtxKey = 0

// Names of the CSRF token's carriers.
const (
	csrfCookie = "otpgate_admin_csrf"
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// maxActorName bounds the Basic user name written to the audit log.
const maxActorName = 64

// errForbidden refuses a call the caller's role does not allow.
var errForbidden = otp.Errorf(otp.CodeForbidden, "your role does not allow this")

// authenticator finds who a request comes from: ADMIN_TOKEN (break-glass) or an
// operator's personal token, as a Bearer token or the password of HTTP Basic.
type authenticator struct {
	// token is ADMIN_TOKEN; empty refuses it.
	token string
	// operators checks personal tokens; nil accepts none.
	operators operators.AdminService
	// sessions reads the single sign-on cookie; nil accepts none.
	sessions *signIn
}

// authenticate returns the principal of the request's credential and how it came.
// A wrong credential is authNone; an error means the operators' store did not answer.
func (a authenticator) authenticate(r *http.Request) (operators.Principal, adminAuth, string, error) {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	var (
		secret, user string
		how          adminAuth
	)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		secret, how = strings.TrimSpace(cred), authBearer
	case strings.EqualFold(scheme, "Basic"):
		u, pass, ok := r.BasicAuth()
		if !ok {
			return operators.Principal{}, authNone, "", nil
		}
		secret, user, how = pass, u, authBasic
	case r.Header.Get("Authorization") == "":
		// A signed-in console: the account is read at every request, so a disabled
		// account or a changed role counts at once.
		sess, ok := a.sessions.sessionOf(r)
		if !ok {
			return operators.Principal{}, authNone, "", nil
		}
		p, err := a.operators.Session(r.Context(), sess.OperatorID, sess.Epoch)
		if errors.Is(err, operators.ErrBadToken) {
			return operators.Principal{}, authNone, "", nil
		}
		return p, authSession, "", err
	default:
		return operators.Principal{}, authNone, "", nil
	}
	if tokenMatches(secret, a.token) {
		return operators.BreakGlass(), how, user, nil
	}
	if a.operators == nil || !operators.LooksLikeToken(secret) {
		return operators.Principal{}, authNone, "", nil
	}
	p, err := a.operators.Authenticate(r.Context(), secret)
	switch {
	case errors.Is(err, operators.ErrBadToken):
		return operators.Principal{}, authNone, "", nil
	case err != nil:
		return operators.Principal{}, authNone, "", err
	}
	return p, how, user, nil
}

// requireAdmin refuses requests without a valid credential (401, with a challenge the
// client understands) and state changes made with a browser's Basic login that do not
// carry a valid CSRF token (403). It hands the principal and the actor's description to
// the handlers. The Authorization header is never logged.
func requireAdmin(log *slog.Logger, view *adminView, auth authenticator, csrf csrfGuard) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, how, user, err := auth.authenticate(r)
			if err != nil {
				adminError(w, r, log, view, err)
				return
			}
			if how == authNone {
				if isAdminAPI(r) {
					w.Header().Add("WWW-Authenticate", `Bearer realm="otpgate admin"`)
				}
				w.Header().Add("WWW-Authenticate", `Basic realm="otpgate admin", charset="UTF-8"`)
				adminError(w, r, log, view, errUnauthorized)
				return
			}
			if (how == authBasic || how == authSession) && !safeMethod(r.Method) {
				if err := csrf.verify(r, p); err != nil {
					log.WarnContext(r.Context(), "admin change refused", "request_id", httpkit.RequestIDFrom(r.Context()), "reason", err.Error())
					adminError(w, r, log, view, err)
					return
				}
			}
			ip := httpkit.ClientIPFrom(r.Context())
			ctx := operators.WithPrincipal(r.Context(), p)
			ctx = context.WithValue(ctx, adminActorKey, describeActor(p, how, user)+" from "+ip)
			ctx = history.WithActor(ctx, auditActor(p, ip))
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// describeActor names the principal for the audit log. The break-glass login says how
// it came and, for the console, the user name the browser gave, which nobody checked.
func describeActor(p operators.Principal, how adminAuth, user string) string {
	if p.Kind != operators.KindBreakGlass {
		return p.String()
	}
	if how == authBasic {
		return "break-glass console user " + actorName(user)
	}
	return "break-glass api token"
}

// auditActor is who the audit log records for the principal's changes.
func auditActor(p operators.Principal, ip string) history.Actor {
	switch p.Kind {
	case operators.KindSession:
		return history.Actor{Kind: history.ActorSession, Name: p.Operator.Email, ID: p.Operator.ID, ClientIP: ip}
	case operators.KindToken:
		return history.Actor{Kind: history.ActorToken, Name: p.Operator.Email, ID: p.Operator.ID, TokenID: p.TokenID, ClientIP: ip}
	}
	return history.Actor{Kind: history.ActorBreakGlass, Name: history.ActorBreakGlass, ClientIP: ip}
}

// requireRole refuses the request with 403 unless its principal's role allows need.
// requireAdmin runs first, so a request without a principal never gets here; if one
// did, it would be refused too.
func requireRole(log *slog.Logger, view *adminView, need operators.Role, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := operators.PrincipalFrom(r.Context()); !ok || !p.Allows(need) {
			adminError(w, r, log, view, errForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// actorFrom describes who made the request, for the audit log.
func actorFrom(ctx context.Context) string {
	a, _ := ctx.Value(adminActorKey).(string)
	return a
}

// tokenMatches compares hashes, so neither the content nor the length of the token
// leaks through timing. An empty token matches nothing.
func tokenMatches(got, want string) bool {
	if want == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// safeMethod reports whether the method changes nothing.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// isAdminAPI reports whether the request is for a machine rather than a page: the JSON
// API, its OpenAPI document, or the runtime profiles.
func isAdminAPI(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/admin/api/") || r.URL.Path == "/admin/openapi.json" ||
		strings.HasPrefix(r.URL.Path, "/debug/pprof/")
}

// actorName keeps a user-chosen Basic name short and printable for the audit log.
func actorName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, name)
	if len([]rune(name)) > maxActorName {
		name = string([]rune(name)[:maxActorName])
	}
	if name == "" {
		return "(no name)"
	}
	return `"` + name + `"`
}
