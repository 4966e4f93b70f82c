package admin

import (
	"errors"
	"log/slog"
	"net/http"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// The admin listener renders errors its own way: problem+json for the API (isAdminAPI),
// an error page for the console, and a missing record named as a send or verification
// rather than as the public API's pending verification.

// adminProblemFor is httpkit.ProblemFor on the admin listener, where a missing record is
// a send or verification.
func adminProblemFor(err error) httpkit.Problem {
	p := httpkit.ProblemFor(err)
	var named *notFoundError
	switch {
	case errors.As(err, &named):
		p.Detail = named.what
	case errors.Is(err, otp.ErrNotFound):
		p.Detail = "there is no such send or verification"
	}
	return p
}

// writeAdminProblem answers the admin API with the problem for err.
func writeAdminProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	httpkit.SendProblem(w, r, log, adminProblemFor(err), err)
}

// adminError answers err as problem+json for the API and as an error page for the
// console, logging it as every problem is logged.
func adminError(w http.ResponseWriter, r *http.Request, log *slog.Logger, view *adminView, err error) {
	p := adminProblemFor(err)
	if isAdminAPI(r) {
		httpkit.SendProblem(w, r, log, p, err)
		return
	}
	ctx := r.Context()
	httpkit.LogProblem(ctx, log, err)
	page := errorPage{Status: p.Status, Heading: p.Title, Message: p.Detail, RequestID: httpkit.RequestIDFrom(ctx)}
	switch p.Status {
	case http.StatusUnauthorized:
		page.Message = "Sign in with single sign-on, or log in with any user name and your personal admin token (or, as break-glass, ADMIN_TOKEN) as the password."
	case http.StatusForbidden:
		page.Message = "This form is out of date or was sent from another site. Go back, reload the page and try again."
		if p.Code == string(otp.CodeForbidden) {
			page.Message = "Your role does not allow this. Ask an admin."
		}
	case http.StatusBadRequest:
		page.Message = "Some values are not valid."
		page.Problems = sortedProblems(p.Errors)
	case http.StatusServiceUnavailable:
		page.Message = "Redis or PostgreSQL did not answer in time. Try again in a moment."
	case http.StatusInternalServerError:
		page.Message = "Something went wrong. The request id below is in the server log."
	}
	view.render(w, r, p.Status, "error", pageData{Title: p.Title, Data: page})
}

// invalidFields returns the field problems of a store's *otp.ErrInvalidRequest.
func invalidFields(err error) (map[string]string, bool) {
	var invalid *otp.ErrInvalidRequest
	if errors.As(err, &invalid) {
		return invalid.Fields, true
	}
	return nil, false
}

// handleAdminNotFound answers unknown admin paths: a problem for the API, a page otherwise.
func handleAdminNotFound(log *slog.Logger, view *adminView) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAdminAPI(r) {
			httpkit.NotFound(log).ServeHTTP(w, r)
			return
		}
		view.fail(w, r, http.StatusNotFound, "There is no such page.")
	})
}

// writeFraudProblem answers err, naming what was not found when it is otp.ErrNotFound.
func writeFraudProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, notFound string) {
	p := adminProblemFor(err)
	if notFound != "" && errors.Is(err, otp.ErrNotFound) {
		p.Detail = notFound
	}
	httpkit.SendProblem(w, r, log, p, err)
}

// invalidParams turns parameter problems into the error the API answers 400 for.
func invalidParams(problems map[string]string) error {
	return invalidRequest("invalid query parameters", problems)
}

// invalidRequest is a request refused before any service saw it: a detail, and per-field
// problems.
func invalidRequest(detail string, fields map[string]string) *otp.ErrInvalidRequest {
	return &otp.ErrInvalidRequest{Detail: detail, Fields: fields}
}
