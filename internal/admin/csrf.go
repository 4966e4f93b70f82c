package admin

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"

	"otpgate/internal/operators"
)

// csrfGuard issues and checks CSRF tokens: the browser holds a random nonce in a
// SameSite=Strict cookie, and forms carry HMAC(key, nonce, person), where the person is
// who the request authenticates as. Another site can neither read the cookie nor compute
// the token; a cookie planted by a neighbouring host is useless without the key, which
// derives from the admin token; and a nonce and token someone obtained with their own
// login (a viewer's, say) do not pass another person's form.
type csrfGuard struct {
	key []byte
}

// newCSRFGuard derives the guard's key, so rotating ADMIN_TOKEN voids every token.
func newCSRFGuard(token string) csrfGuard {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("otpgate admin csrf key"))
	return csrfGuard{key: mac.Sum(nil)}
}

// tokenFor is the form token that belongs to a nonce and a person (csrfPerson).
func (g csrfGuard) tokenFor(nonce, person string) string {
	mac := hmac.New(sha256.New, g.key)
	mac.Write([]byte("csrf|" + nonce + "|" + person))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// csrfPerson names whom a CSRF token is for: a session's account in its session epoch
// (so a sign-out voids its tokens too), a personal token, or the break-glass login.
func csrfPerson(p operators.Principal) string {
	switch p.Kind {
	case operators.KindSession:
		return fmt.Sprintf("session %s %d", p.Operator.ID, p.Operator.SessionEpoch)
	case operators.KindToken:
		return "token " + p.TokenID
	}
	return string(p.Kind)
}

// issue returns the token for the browser's nonce and the request's person, giving the
// browser a nonce first when it has none.
func (g csrfGuard) issue(w http.ResponseWriter, r *http.Request) string {
	p, _ := operators.PrincipalFrom(r.Context())
	if c, err := r.Cookie(csrfCookie); err == nil && validNonce(c.Value) {
		return g.tokenFor(c.Value, csrfPerson(p))
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	nonce := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: nonce, Path: "/admin/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	return g.tokenFor(nonce, csrfPerson(p))
}

// verify checks a state-changing request of the person p: a browser that says the
// request comes from another site (Sec-Fetch-Site, or an Origin other than this host,
// "null" included) is refused outright; otherwise the token in the form field or the
// X-CSRF-Token header must belong to the cookie's nonce and to p. Errors wrap errCSRF.
func (g csrfGuard) verify(r *http.Request, p operators.Principal) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return fmt.Errorf("%w: Sec-Fetch-Site %s", errCSRF, site)
	}
	// The console's Referrer-Policy same-origin has browsers send its own origin with its
	// form posts. "null" is what a sandboxed frame, a data: URL or a cross-origin redirect
	// sends, none of which is the console.
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || origin == "null" || u.Host != r.Host {
			return fmt.Errorf("%w: origin is not this host", errCSRF)
		}
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || !validNonce(c.Value) {
		return fmt.Errorf("%w: no CSRF cookie", errCSRF)
	}
	sent := r.Header.Get(csrfHeader)
	if sent == "" {
		sent = r.PostFormValue(csrfField)
	}
	if subtle.ConstantTimeCompare([]byte(sent), []byte(g.tokenFor(c.Value, csrfPerson(p)))) != 1 {
		return fmt.Errorf("%w: token missing or wrong", errCSRF)
	}
	return nil
}

// validNonce accepts what issue makes: 16 bytes in unpadded base64url.
func validNonce(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 16
}
