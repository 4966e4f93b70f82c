package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/httpkit"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
)

// adminOperator is one account as the admin API shows it.
type adminOperator struct {
	ID              string     `json:"id"`
	Email           string     `json:"email"`
	Subject         *string    `json:"subject"`
	Name            string     `json:"name"`
	Role            string     `json:"role"`
	RoleFromConsole bool       `json:"role_from_console"`
	Disabled        bool       `json:"disabled"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	LastSeenAt      *time.Time `json:"last_seen_at"`
	// Tokens are listed on GET /admin/api/operators/{id} only.
	Tokens []adminOperatorToken `json:"tokens,omitempty"`
}

func toAdminOperator(o operators.Operator) adminOperator {
	out := adminOperator{ID: o.ID, Email: o.Email, Name: o.Name, Role: string(o.Role), RoleFromConsole: o.RoleFromConsole,
		Disabled: o.Disabled, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, LastSeenAt: timeOrNil(o.LastSeenAt)}
	if o.Subject != "" {
		out.Subject = &o.Subject
	}
	return out
}

// adminOperatorToken is one personal token; Secret only in the answer that made it.
type adminOperatorToken struct {
	ID         string     `json:"id"`
	OperatorID string     `json:"operator_id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	Secret     string     `json:"secret,omitempty"`
}

func toAdminOperatorToken(t operators.Token) adminOperatorToken {
	return adminOperatorToken{ID: t.ID, OperatorID: t.OperatorID, Name: t.Name, CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt,
		LastUsedAt: timeOrNil(t.LastUsedAt), RevokedAt: timeOrNil(t.RevokedAt)}
}

// operatorsResponse is GET /admin/api/operators.
type operatorsResponse struct {
	Operators []adminOperator `json:"operators"`
}

// operatorRequest is the body of POST /admin/api/operators and PATCH /admin/api/operators/{id}.
type operatorRequest struct {
	Email    *string `json:"email"`
	Name     *string `json:"name"`
	Role     *string `json:"role"`
	Disabled *bool   `json:"disabled"`
}

// tokenRequest is the body of POST /admin/api/operators/{id}/tokens; it may be empty.
type tokenRequest struct {
	Name          string `json:"name"`
	ExpiresInDays *int   `json:"expires_in_days"`
}

// meResponse is GET /admin/api/me: who the caller is.
type meResponse struct {
	Kind     string         `json:"kind"`
	Role     string         `json:"role"`
	Operator *adminOperator `json:"operator"`
	TokenID  *string        `json:"token_id"`
}

// operatorNotFound names the missing record as an operator or token.
func operatorNotFound(err error) error {
	if errors.Is(err, otp.ErrNotFound) {
		return &notFoundError{what: "there is no such operator or live token", err: err}
	}
	return err
}

// notFoundError is otp.ErrNotFound with the detail the admin listener shows for it.
type notFoundError struct {
	what string
	err  error
}

func (e *notFoundError) Error() string { return e.what }
func (e *notFoundError) Unwrap() error { return e.err }

// handleAdminOperators serves GET and POST /admin/api/operators.
func handleAdminOperators(log *slog.Logger, ops operators.AdminService) http.Handler {
	requests := httpkit.NewDecoder[operatorRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			list, err := ops.ListOperators(r.Context())
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			out := operatorsResponse{Operators: make([]adminOperator, len(list))}
			for i, o := range list {
				out.Operators[i] = toAdminOperator(o)
			}
			_ = httpkit.Encode(w, http.StatusOK, out)
			return
		}
		req, err := decodeBody(r, requests)
		if err == nil && req.Disabled != nil {
			err = invalidRequest("a new operator cannot be disabled", map[string]string{"disabled": "is not taken when creating"})
		}
		if err == nil {
			var o operators.Operator
			if o, err = ops.CreateOperator(r.Context(), operators.NewOperator{Email: deref(req.Email), Name: deref(req.Name), Role: deref(req.Role)}, actorFrom(r.Context())); err == nil {
				w.Header().Set("Location", "/admin/api/operators/"+o.ID)
				_ = httpkit.Encode(w, http.StatusCreated, toAdminOperator(o))
				return
			}
		}
		writeAdminProblem(w, r, log, err)
	})
}

// handleAdminOperator serves GET and PATCH /admin/api/operators/{id}.
func handleAdminOperator(log *slog.Logger, ops operators.AdminService) http.Handler {
	requests := httpkit.NewDecoder[operatorRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		if r.Method == http.MethodGet {
			info, err := ops.GetOperator(r.Context(), id)
			if err != nil {
				writeAdminProblem(w, r, log, operatorNotFound(err))
				return
			}
			out := toAdminOperator(info.Operator)
			out.Tokens = make([]adminOperatorToken, len(info.Tokens))
			for i, t := range info.Tokens {
				out.Tokens[i] = toAdminOperatorToken(t)
			}
			_ = httpkit.Encode(w, http.StatusOK, out)
			return
		}
		req, err := decodeBody(r, requests)
		if err == nil && req.Email != nil {
			err = invalidRequest("an operator's email cannot change", map[string]string{"email": "cannot change; create another operator"})
		}
		if err == nil {
			var o operators.Operator
			if o, err = ops.UpdateOperator(r.Context(), id, operators.Patch{Name: req.Name, Role: req.Role, Disabled: req.Disabled}, actorFrom(r.Context())); err == nil {
				_ = httpkit.Encode(w, http.StatusOK, toAdminOperator(o))
				return
			}
		}
		writeAdminProblem(w, r, log, operatorNotFound(err))
	})
}

// handleAdminOperatorTokens serves POST /admin/api/operators/{id}/tokens: the answer is
// the only place the secret ever appears.
func handleAdminOperatorTokens(log *slog.Logger, ops operators.AdminService) http.Handler {
	requests := httpkit.NewDecoder[tokenRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var (
			req tokenRequest
			err error
		)
		// A token needs nothing, so an empty POST is fine; a body must be JSON.
		if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
			var body []byte
			if body, err = httpkit.ReadJSON(r); err == nil && len(body) > 0 {
				req, err = requests.Decode(body)
			}
		}
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		n := operators.NewToken{Name: req.Name}
		if d := req.ExpiresInDays; d != nil {
			if *d < 1 || *d > int(operators.MaxTokenTTL/(24*time.Hour)) {
				writeAdminProblem(w, r, log, invalidRequest("invalid token", map[string]string{"expires_in_days": "must be between 1 and 365"}))
				return
			}
			n.ExpiresIn = time.Duration(*d) * 24 * time.Hour
		}
		t, err := ops.CreateToken(r.Context(), chi.URLParam(r, "id"), n, actorFrom(r.Context()))
		if err != nil {
			writeAdminProblem(w, r, log, operatorNotFound(err))
			return
		}
		out := toAdminOperatorToken(t.Token)
		out.Secret = t.Secret
		_ = httpkit.Encode(w, http.StatusCreated, out)
	})
}

// handleAdminOperatorToken serves DELETE /admin/api/operators/{id}/tokens/{token_id}: the token is revoked.
func handleAdminOperatorToken(log *slog.Logger, ops operators.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := ops.RevokeToken(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "token_id"), actorFrom(r.Context())); err != nil {
			writeAdminProblem(w, r, log, operatorNotFound(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleAdminMe serves GET /admin/api/me.
func handleAdminMe() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := operators.PrincipalFrom(r.Context())
		out := meResponse{Kind: string(p.Kind), Role: string(p.Role)}
		if p.Kind != operators.KindBreakGlass {
			o := toAdminOperator(p.Operator)
			out.Operator = &o
		}
		if p.TokenID != "" {
			out.TokenID = &p.TokenID
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// decodeBody reads a JSON body strictly.
func decodeBody[T any](r *http.Request, d httpkit.Decoder[T]) (T, error) {
	body, err := httpkit.ReadJSON(r)
	if err != nil {
		var zero T
		return zero, err
	}
	return d.Decode(body)
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
