package http

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/totp"
)

// TOTP is what the native TOTP routes need: *totp.Service.
type TOTP interface {
	Entity(ctx context.Context, appID, identity string) (totp.Entity, error)
	DeleteEntity(ctx context.Context, appID, identity string) error
	CreateFactor(ctx context.Context, app otp.App, n totp.NewFactor) (totp.Enrolment, error)
	Factor(ctx context.Context, appID, identity, id string) (totp.Factor, error)
	Factors(ctx context.Context, appID, identity string) ([]totp.Factor, error)
	DeleteFactor(ctx context.Context, appID, identity, id string) error
	VerifyFactor(ctx context.Context, appID, identity, id, code string) (totp.Factor, bool, error)
	CreateChallenge(ctx context.Context, appID, identity, factorID, code string) (totp.Challenge, error)
}

// errTOTPKey refuses a TOTP call without the app's key: enrolment and challenges are the
// app's server's business, since whoever enrols a factor for an identity could sign in as it.
var errTOTPKey = otp.Errorf(otp.CodeUnauthorized, "TOTP calls need one of the app's keys (Authorization: Bearer): they are made by the app's server")

// errWrongTOTP answers a code that is wrong, out of the skew window or used before.
var errWrongTOTP = otp.Errorf(otp.CodeInvalidCode, "the code is wrong, out of time or was used before")

// totpRoutes adds the native TOTP API under /v1/apps/{app}/totp.
func totpRoutes(r chi.Router, d Deps, app func(http.Handler) http.Handler) {
	if d.TOTP == nil {
		return
	}
	keyed := func(h http.Handler) http.Handler { return app(withTOTPKey(d.Logger, d.Apps, h)) }
	const entity = "/v1/apps/{app}/totp/entities/{identity}"
	r.Method(http.MethodDelete, entity, keyed(handleTOTPEntityDelete(d.Logger, d.TOTP)))
	r.Method(http.MethodPost, entity+"/factors", keyed(handleTOTPFactorCreate(d.Logger, d.TOTP)))
	r.Method(http.MethodGet, entity+"/factors", keyed(handleTOTPFactorList(d.Logger, d.TOTP)))
	r.Method(http.MethodGet, entity+"/factors/{factor}", keyed(handleTOTPFactorFetch(d.Logger, d.TOTP)))
	r.Method(http.MethodDelete, entity+"/factors/{factor}", keyed(handleTOTPFactorDelete(d.Logger, d.TOTP)))
	r.Method(http.MethodPost, entity+"/factors/{factor}/verify", keyed(handleTOTPFactorVerify(d.Logger, d.TOTP)))
	r.Method(http.MethodPost, entity+"/challenges", keyed(handleTOTPChallenge(d.Logger, d.TOTP)))
}

// withTOTPKey lets through only a call that brings one of the app's keys (withApp has
// authenticated it): a public app's anonymous callers may send codes, never manage factors.
func withTOTPKey(log *slog.Logger, dir apps.Directory, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dir != nil {
			if k, err := bearerKey(r, dir); err == nil && k.ID != "" {
				next.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="otpgate"`)
		httpkit.WriteProblem(w, r, log, errTOTPKey)
	})
}

// totpFactor is a factor in the native API.
type totpFactor struct {
	ID           string    `json:"id"`
	Identity     string    `json:"identity"`
	FriendlyName string    `json:"friendly_name"`
	Status       string    `json:"status"`
	Alg          string    `json:"alg"`
	Digits       int       `json:"digits"`
	Period       int       `json:"period"`
	Skew         int       `json:"skew"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func newTOTPFactor(f totp.Factor) totpFactor {
	return totpFactor{ID: f.ID, Identity: f.Identity, FriendlyName: f.FriendlyName, Status: string(f.Status),
		Alg: string(f.Config.Alg), Digits: f.Config.Digits, Period: f.Config.Period, Skew: f.Config.Skew,
		CreatedAt: f.CreatedAt.UTC(), UpdatedAt: f.UpdatedAt.UTC()}
}

// totpFactorRequest is the body of creating a factor; unset settings take the defaults.
type totpFactorRequest struct {
	FriendlyName string  `json:"friendly_name"`
	Alg          *string `json:"alg"`
	Digits       *int    `json:"digits"`
	Period       *int    `json:"period"`
	Skew         *int    `json:"skew"`
}

// totpEnrolment is a new factor with its secret and otpauth URI, shown once.
type totpEnrolment struct {
	totpFactor
	Secret string `json:"secret"`
	URI    string `json:"uri"`
	// QRPNG is the URI as a QR code, a PNG in a data URI, for an img element.
	QRPNG string `json:"qr_png"`
}

func handleTOTPFactorCreate(log *slog.Logger, s TOTP) http.Handler {
	requests := httpkit.NewDecoder[totpFactorRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := httpkit.ReadJSON(r)
		var req totpFactorRequest
		if err == nil {
			req, err = requests.Decode(body)
		}
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		cfg := totp.DefaultConfig()
		if req.Alg != nil {
			cfg.Alg = totp.Algorithm(*req.Alg)
		}
		if req.Digits != nil {
			cfg.Digits = *req.Digits
		}
		if req.Period != nil {
			cfg.Period = *req.Period
		}
		if req.Skew != nil {
			cfg.Skew = *req.Skew
		}
		app := appFrom(ctx)
		en, err := s.CreateFactor(ctx, *app, totp.NewFactor{Identity: chi.URLParam(r, "identity"), FriendlyName: req.FriendlyName, Config: cfg})
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		qr, err := totp.QRPNG(en.URI)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		_ = httpkit.Encode(w, http.StatusCreated, totpEnrolment{totpFactor: newTOTPFactor(en.Factor), Secret: en.Secret, URI: en.URI,
			QRPNG: "data:image/png;base64," + base64.StdEncoding.EncodeToString(qr)})
	})
}

func handleTOTPFactorList(log *slog.Logger, s TOTP) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		list, err := s.Factors(ctx, appFrom(ctx).ID, chi.URLParam(r, "identity"))
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		out := make([]totpFactor, len(list))
		for i, f := range list {
			out[i] = newTOTPFactor(f)
		}
		_ = httpkit.Encode(w, http.StatusOK, struct {
			Factors []totpFactor `json:"factors"`
		}{out})
	})
}

func handleTOTPFactorFetch(log *slog.Logger, s TOTP) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		f, err := s.Factor(ctx, appFrom(ctx).ID, chi.URLParam(r, "identity"), chi.URLParam(r, "factor"))
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, newTOTPFactor(f))
	})
}

func handleTOTPFactorDelete(log *slog.Logger, s TOTP) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if err := s.DeleteFactor(ctx, appFrom(ctx).ID, chi.URLParam(r, "identity"), chi.URLParam(r, "factor")); err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func handleTOTPEntityDelete(log *slog.Logger, s TOTP) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if err := s.DeleteEntity(ctx, appFrom(ctx).ID, chi.URLParam(r, "identity")); err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// totpCodeRequest is the body of verifying a factor.
type totpCodeRequest struct {
	Code string `json:"code"`
}

// handleTOTPFactorVerify serves …/factors/{factor}/verify: a right, unused code verifies
// the factor (200 with it); anything else is 422 invalid_code.
func handleTOTPFactorVerify(log *slog.Logger, s TOTP) http.Handler {
	requests := httpkit.NewDecoder[totpCodeRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := httpkit.ReadJSON(r)
		var req totpCodeRequest
		if err == nil {
			req, err = requests.Decode(body)
		}
		var f totp.Factor
		ok := false
		if err == nil {
			f, ok, err = s.VerifyFactor(ctx, appFrom(ctx).ID, chi.URLParam(r, "identity"), chi.URLParam(r, "factor"), req.Code)
		}
		if err == nil && !ok {
			err = errWrongTOTP
		}
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, newTOTPFactor(f))
	})
}

// totpChallengeRequest is the body of a challenge.
type totpChallengeRequest struct {
	FactorID string `json:"factor_id"`
	Code     string `json:"code"`
}

// totpChallenge is a decided challenge.
type totpChallenge struct {
	ID        string    `json:"id"`
	Identity  string    `json:"identity"`
	FactorID  string    `json:"factor_id"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

// handleTOTPChallenge serves …/challenges: 201 with the challenge, approved or denied (a
// denied one is an answer, not an error: the app decides what a denial means).
func handleTOTPChallenge(log *slog.Logger, s TOTP) http.Handler {
	requests := httpkit.NewDecoder[totpChallengeRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := httpkit.ReadJSON(r)
		var req totpChallengeRequest
		if err == nil {
			req, err = requests.Decode(body)
		}
		if err == nil && req.FactorID == "" {
			err = httpkit.InvalidRequest("factor_id is required", map[string]string{"factor_id": "is required"})
		}
		var c totp.Challenge
		if err == nil {
			c, err = s.CreateChallenge(ctx, appFrom(ctx).ID, chi.URLParam(r, "identity"), req.FactorID, req.Code)
		}
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusCreated, totpChallenge{ID: c.ID, Identity: c.Identity, FactorID: c.FactorID, Status: string(c.Status), CreatedAt: c.CreatedAt.UTC()})
	})
}
