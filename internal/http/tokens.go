package http

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/tokens"
)

// Tokens issues the verification token of an approved check and redeems tokens;
// *tokens.Service implements it.
type Tokens interface {
	// Issue signs the token of v, a verification of app just approved.
	Issue(app otp.App, v otp.Verification) (string, error)
	// Redeem verifies a token of app and marks it used. Errors: tokens.ErrInvalid,
	// tokens.ErrExpired, tokens.ErrRedeemed, and the store's.
	Redeem(ctx context.Context, app otp.App, token string) (tokens.Redeemed, error)
	// JWKS is the published public keys as a JSON Web Key Set.
	JWKS() ([]byte, error)
}

// issueToken is the token of an approved check of v; "" without a token service.
func issueToken(ctx context.Context, t Tokens, v otp.Verification) (string, error) {
	if t == nil {
		return "", nil
	}
	app := otp.App{ID: otp.StoredAppID(v.AppID)}
	if a := appFrom(ctx); a != nil {
		app = *a
	}
	return t.Issue(app, v)
}

// redeemRequest is the body of POST /v1/apps/{app}/tokens/redeem.
type redeemRequest struct {
	Token string `json:"token"`
}

// redeemResponse is what a redeemed token said.
type redeemResponse struct {
	JTI          string    `json:"jti"`
	AppID        string    `json:"app_id"`
	Address      string    `json:"address,omitempty"`
	AddressIndex string    `json:"address_index,omitempty"`
	Channel      string    `json:"channel"`
	Verification string    `json:"verification_id"`
	IssuedAt     time.Time `json:"issued_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	RedeemedAt   time.Time `json:"redeemed_at"`
}

// handleRedeem serves POST /v1/apps/{app}/tokens/redeem: the app's backend, with one of
// the app's keys (public apps too: the browser holds the token, never a key), marks a
// token used once and learns what it says.
func handleRedeem(log *slog.Logger, t Tokens) http.Handler {
	requests := httpkit.NewDecoder[redeemRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// withApp authenticated any key sent; a public app's caller may have sent none.
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="otpgate"`)
			httpkit.WriteProblem(w, r, log, apps.ErrBadKey)
			return
		}
		body, err := httpkit.ReadJSON(r)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		req, err := requests.Decode(body)
		if err == nil && req.Token == "" {
			err = httpkit.InvalidRequest("token is required", map[string]string{"token": "is required"})
		}
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		app := otp.App{ID: otp.DefaultAppID}
		if a := appFrom(r.Context()); a != nil {
			app = *a
		}
		red, err := t.Redeem(r.Context(), app, req.Token)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, redeemResponse{
			JTI: red.ID, AppID: red.App, Address: red.Address, AddressIndex: red.AddressIndex, Channel: red.Channel,
			Verification: red.Verification, IssuedAt: red.IssuedAt, ExpiresAt: red.ExpiresAt, RedeemedAt: red.RedeemedAt.UTC().Truncate(time.Second),
		})
	})
}

// handleJWKS serves GET /.well-known/jwks.json: the keys tokens are signed with, cached
// for tokens.JWKSMaxAge (new keys are published tokens.PublishLead before they sign).
func handleJWKS(log *slog.Logger, t Tokens) http.Handler {
	maxAge := "public, max-age=" + strconv.Itoa(int(tokens.JWKSMaxAge/time.Second))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		set, err := t.JWKS()
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", maxAge)
		w.Header().Set("Content-Length", strconv.Itoa(len(set)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(set)
	})
}
