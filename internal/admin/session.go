package admin

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"otpgate/internal/operators"
)

// SignOn is the identity provider as the console's single sign-on needs it; *sso.Client
// implements it.
type SignOn interface {
	// AuthCodeURL is where the browser signs in; state and nonce are this sign-in's,
	// verifier its PKCE code verifier.
	AuthCodeURL(ctx context.Context, state, nonce, verifier string) (string, error)
	// Exchange trades the callback's code for the verified identity it names.
	Exchange(ctx context.Context, code, verifier, nonce string) (operators.Identity, error)
}

// Names and lifetimes of the sign-in cookies.
const (
	sessionCookie = "otpgate_admin_session"
	loginCookie   = "otpgate_admin_login"
	// loginTTL bounds the trip to the identity provider and back.
	loginTTL = 10 * time.Minute
	// DefaultSessionTTL is how long a console sign-in lasts when Deps.SessionTTL is 0.
	DefaultSessionTTL = 12 * time.Hour
)

// sealer seals the sign-in cookies with AES-256-GCM, so the browser holds them but can
// neither read nor change them. Its key derives from OTP_SECRET: rotating the secret
// signs everyone out.
type sealer struct {
	aead cipher.AEAD
}

func newSealer(secret []byte) sealer {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("otpgate admin session key"))
	block, _ := aes.NewCipher(mac.Sum(nil)) // a 32-byte key never fails
	aead, _ := cipher.NewGCM(block)
	return sealer{aead: aead}
}

// seal encrypts v as JSON under the cookie's name, which is bound as additional data so
// one cookie cannot stand in for another.
func (s sealer) seal(name string, v any) string {
	plain, _ := json.Marshal(v) // the sealed types always marshal
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(name)))
}

// open decrypts what seal made into v.
func (s sealer) open(name, sealed string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return errors.New("malformed")
	}
	plain, err := s.aead.Open(nil, b[:s.aead.NonceSize()], b[s.aead.NonceSize():], []byte(name))
	if err != nil {
		return errors.New("not sealed by this server")
	}
	return json.Unmarshal(plain, v)
}

// session is the sealed session cookie: who signed in, until when.
type session struct {
	OperatorID string `json:"op"`
	// Epoch is the account's session epoch at sign-in; a sign-out moves the account's on,
	// which voids this session on the server, whatever the browser still holds.
	Epoch   int64 `json:"ep"`
	Expires int64 `json:"exp"`
}

// loginState is the sealed cookie of a sign-in under way.
type loginState struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Expires  int64  `json:"exp"`
}

// signIn is the console's single sign-on: the routes that start and finish it, and the
// session it leaves in a cookie.
type signIn struct {
	provider SignOn
	ops      operators.AdminService
	roles    operators.RoleMap
	seal     sealer
	ttl      time.Duration
	// secure marks the cookies Secure; off only for a console served over plain http.
	secure bool
	now    func() time.Time
}

// sessionOf returns the session of a sealed, unexpired session cookie; ok is false when
// there is none.
func (s *signIn) sessionOf(r *http.Request) (sess session, ok bool) {
	if s == nil {
		return session{}, false
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	if s.seal.open(sessionCookie, c.Value, &sess) != nil || s.now().Unix() >= sess.Expires || sess.OperatorID == "" {
		return session{}, false
	}
	return sess, true
}

// cookie is one of the sign-in cookies: HttpOnly, SameSite=Lax (it must come along on
// the identity provider's top-level redirect back), Secure unless served over http.
func (s *signIn) cookie(name, value string, maxAge time.Duration) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: "/admin/", HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode, MaxAge: int(maxAge.Seconds())}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	return c
}

// random returns 32 random bytes in base64url.
func random() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// handleLogin starts a sign-in: it binds state, nonce and the PKCE verifier to the
// browser in a sealed cookie and sends the browser to the identity provider.
func handleLogin(log *slog.Logger, view *adminView, s *signIn) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := loginState{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Expires: s.now().Add(loginTTL).Unix()}
		to, err := s.provider.AuthCodeURL(r.Context(), st.State, st.Nonce, st.Verifier)
		if err != nil {
			log.WarnContext(r.Context(), "identity provider unavailable", "err", err)
			view.fail(w, r, http.StatusServiceUnavailable, "The identity provider does not answer. Try again later; the break-glass login (ADMIN_TOKEN) still works.")
			return
		}
		http.SetCookie(w, s.cookie(loginCookie, s.seal.seal(loginCookie, st), loginTTL))
		http.Redirect(w, r, to, http.StatusFound)
	})
}

// handleCallback finishes a sign-in: the state must be the one this browser started
// with, the code is exchanged with the PKCE verifier, the ID token is verified, and the
// operator's account is found or created; then the session cookie is set.
func handleCallback(log *slog.Logger, view *adminView, s *signIn) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		http.SetCookie(w, s.cookie(loginCookie, "", -1))
		c, err := r.Cookie(loginCookie)
		var st loginState
		q := r.URL.Query()
		switch {
		case err != nil || s.seal.open(loginCookie, c.Value, &st) != nil || s.now().Unix() >= st.Expires:
			view.fail(w, r, http.StatusUnauthorized, "This sign-in was not started here or took too long. Start again.")
			return
		case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1:
			view.fail(w, r, http.StatusUnauthorized, "This sign-in does not belong to this browser. Start again.")
			return
		case q.Get("error") != "" || q.Get("code") == "":
			view.fail(w, r, http.StatusUnauthorized, "The identity provider did not sign you in.")
			return
		}
		// A sign-in is finished once: the login cookie is dropped above, but a copy of it
		// and its state must not sign in again with a fresh code.
		if err := s.ops.UseLogin(ctx, st.State, time.Unix(st.Expires, 0)); errors.Is(err, operators.ErrLoginUsed) {
			view.fail(w, r, http.StatusUnauthorized, "This sign-in was finished already. Start again.")
			return
		} else if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		id, err := s.provider.Exchange(ctx, q.Get("code"), st.Verifier, st.Nonce)
		if err != nil {
			log.WarnContext(ctx, "single sign-on failed", "err", err)
			view.fail(w, r, http.StatusUnauthorized, "The identity provider's answer could not be verified. Start again.")
			return
		}
		p, err := s.ops.SignIn(ctx, id, s.roles)
		if errors.Is(err, operators.ErrNoAccess) {
			log.InfoContext(ctx, "single sign-on refused", "reason", err.Error())
			view.fail(w, r, http.StatusForbidden, "You signed in, but your account may not use this console. Ask an admin.")
			return
		}
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		sess := session{OperatorID: p.Operator.ID, Epoch: p.Operator.SessionEpoch, Expires: s.now().Add(s.ttl).Unix()}
		http.SetCookie(w, s.cookie(sessionCookie, s.seal.seal(sessionCookie, sess), s.ttl))
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
	})
}

// handleLogout ends the console session: on the server, by moving the account's session
// epoch on (which ends its sessions in every browser, so a copied cookie is worth nothing
// after a sign-out), and in the browser, by dropping the cookie.
func handleLogout(log *slog.Logger, view *adminView, s *signIn) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s != nil {
			if p, ok := operators.PrincipalFrom(r.Context()); ok && p.Kind == operators.KindSession {
				if err := s.ops.EndSessions(r.Context(), p.Operator.ID); err != nil {
					adminError(w, r, log, view, err)
					return
				}
			}
			http.SetCookie(w, s.cookie(sessionCookie, "", -1))
		}
		view.render(w, r, http.StatusOK, "error", pageData{Title: "Signed out", Data: errorPage{
			Status: http.StatusOK, Heading: "Signed out", Message: "You are signed out of the console.",
		}})
	})
}
