package admin

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/operators"
)

// operatorsPage is the data of operators.html.
type operatorsPage struct {
	Operators []operators.Operator
	Form      operatorForm
	Problems  []fieldProblem
}

// operatorForm is what the new-operator form held, to show it again with its problems.
type operatorForm struct {
	Email, Name, Role string
}

// operatorPage is the data of operator.html.
type operatorPage struct {
	Operator operators.Operator
	Tokens   []operators.Token
	Problems []fieldProblem
	// Secret is the token just made, shown once.
	Secret *operators.CreatedToken
}

// handleOperatorsPage lists the operators (GET) and creates one (POST), then shows it.
func handleOperatorsPage(log *slog.Logger, view *adminView, ops operators.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		data := operatorsPage{Form: operatorForm{Role: string(operators.RoleViewer)}}
		status := http.StatusOK
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
				return
			}
			data.Form = operatorForm{Email: r.PostForm.Get("email"), Name: r.PostForm.Get("name"), Role: r.PostForm.Get("role")}
			o, err := ops.CreateOperator(ctx, operators.NewOperator(data.Form), actorFrom(ctx))
			if fields, ok := invalidFields(err); ok {
				data.Problems, status = sortedProblems(fields), http.StatusBadRequest
			} else if err != nil {
				adminError(w, r, log, view, err)
				return
			} else {
				http.Redirect(w, r, "/admin/operators/"+o.ID, http.StatusSeeOther)
				return
			}
		}
		list, err := ops.ListOperators(ctx)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data.Operators = list
		view.render(w, r, status, "operators", pageData{Title: "Operators", Nav: "operators", Data: data})
	})
}

// handleOperatorPage shows an operator (GET) and changes it (POST), then shows it again.
func handleOperatorPage(log *slog.Logger, view *adminView, ops operators.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		if r.Method == http.MethodGet {
			renderOperator(w, r, log, view, ops, id, http.StatusOK, nil, nil)
			return
		}
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		var p operators.Patch
		if v, ok := r.PostForm["name"]; ok {
			p.Name = &v[0]
		}
		if v, ok := r.PostForm["role"]; ok {
			p.Role = &v[0]
		}
		if v, ok := r.PostForm["disabled"]; ok {
			d, err := strconv.ParseBool(v[0])
			if err != nil {
				renderOperator(w, r, log, view, ops, id, http.StatusBadRequest, map[string]string{"disabled": "must be true or false"}, nil)
				return
			}
			p.Disabled = &d
		}
		_, err := ops.UpdateOperator(ctx, id, p, actorFrom(ctx))
		if fields, ok := invalidFields(err); ok {
			renderOperator(w, r, log, view, ops, id, http.StatusBadRequest, fields, nil)
			return
		}
		if err != nil {
			adminError(w, r, log, view, operatorNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/operators/"+id, http.StatusSeeOther)
	})
}

// handleOperatorTokenPage makes a token and shows its secret on the operator's page,
// once: the answer is not a redirect, so the secret is in no URL and no later page.
func handleOperatorTokenPage(log *slog.Logger, view *adminView, ops operators.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		n := operators.NewToken{Name: r.PostForm.Get("name")}
		if v := strings.TrimSpace(r.PostForm.Get("expires_in_days")); v != "" {
			days, err := strconv.Atoi(v)
			if err != nil || days < 1 || days > 365 {
				renderOperator(w, r, log, view, ops, id, http.StatusBadRequest, map[string]string{"expires_in_days": "must be a whole number of days from 1 to 365"}, nil)
				return
			}
			n.ExpiresIn = time.Duration(days) * 24 * time.Hour
		}
		t, err := ops.CreateToken(ctx, id, n, actorFrom(ctx))
		if fields, ok := invalidFields(err); ok {
			renderOperator(w, r, log, view, ops, id, http.StatusBadRequest, fields, nil)
			return
		}
		if err != nil {
			adminError(w, r, log, view, operatorNotFound(err))
			return
		}
		renderOperator(w, r, log, view, ops, id, http.StatusCreated, nil, &t)
	})
}

// handleOperatorTokenRevoke revokes a token and goes back to the operator's page.
func handleOperatorTokenRevoke(log *slog.Logger, view *adminView, ops operators.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		if err := ops.RevokeToken(r.Context(), id, chi.URLParam(r, "token_id"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, operatorNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/operators/"+id, http.StatusSeeOther)
	})
}

// renderOperator renders an operator's page with the form's problems or a new token's secret.
func renderOperator(w http.ResponseWriter, r *http.Request, log *slog.Logger, view *adminView, ops operators.AdminService,
	id string, status int, problems map[string]string, secret *operators.CreatedToken) {
	info, err := ops.GetOperator(r.Context(), id)
	if err != nil {
		adminError(w, r, log, view, operatorNotFound(err))
		return
	}
	view.render(w, r, status, "operator", pageData{Title: info.Operator.Email, Nav: "operators", Data: operatorPage{
		Operator: info.Operator, Tokens: info.Tokens, Problems: sortedProblems(problems), Secret: secret,
	}})
}
