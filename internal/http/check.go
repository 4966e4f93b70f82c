package http

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"otpgate/internal/otp"
)

// checkRequest is the body of POST /v1/verifications/check: a code, and either the
// phone or the verification id.
type checkRequest struct {
	Phone string `json:"phone"`
	ID    string `json:"id"`
	Code  string `json:"code"`
}

// validate lists the field problems the API can see without the service.
func (req checkRequest) validate(codeLength int) map[string]string {
	problems := map[string]string{}
	switch {
	case req.Phone == "" && req.ID == "":
		problems["phone"] = `either "phone" or "id" is required`
	case req.Phone != "" && req.ID != "":
		problems["id"] = `give either "phone" or "id", not both`
	case req.ID != "" && !isUUID(req.ID):
		problems["id"] = "must be a UUID"
	}
	if !isDigits(req.Code, codeLength) {
		problems["code"] = fmt.Sprintf("must be %d digits", codeLength)
	}
	return problems
}

// isUUID accepts only the canonical 36-character form, which is what the API hands out.
func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// isDigits reports whether s is exactly n ASCII digits.
func isDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkResponse is the body of an approved check.
type checkResponse struct {
	ID     string `json:"id"`
	Phone  string `json:"phone"`
	Status string `json:"status"`
}

// handleCheck serves POST /v1/verifications/check: 200 when the code approves the
// verification. RateLimit headers are added whenever the check limiter was asked.
func handleCheck(log *slog.Logger, v Verifier, codeLength int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := readJSON(r)
		if err != nil {
			writeProblem(w, r, log, err)
			return
		}
		req, err := decode[checkRequest](body)
		if err != nil {
			writeProblem(w, r, log, err)
			return
		}
		if problems := req.validate(codeLength); len(problems) > 0 {
			writeProblem(w, r, log, &requestError{detail: "the request has invalid fields", fields: problems})
			return
		}
		res, err := v.Check(ctx, otp.CheckInput{ID: req.ID, Phone: req.Phone, Code: req.Code, ClientIP: clientIPFrom(ctx)})
		setRateLimitHeaders(w.Header(), decisionOf(res.Decision, err))
		if err != nil {
			writeProblem(w, r, log, err)
			return
		}
		_ = encode(w, http.StatusOK, checkResponse{ID: res.Verification.ID, Phone: res.Verification.Phone, Status: string(res.Verification.Status)})
	})
}
