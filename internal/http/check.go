package http

import (
	"log/slog"
	"net/http"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/psd2"
)

// checkRequest is the body of POST /v1/verifications/check: a code, and one of the
// phone, the email address or the verification id.
type checkRequest struct {
	Phone string `json:"phone"`
	Email string `json:"email"`
	ID    string `json:"id"`
	Code  string `json:"code"`
	// Amount and Payee are the payment the code was sent for, for an app with PSD2.
	Amount string `json:"amount"`
	Payee  string `json:"payee"`
}

// checkResponse is the body of an approved check.
type checkResponse struct {
	ID     string `json:"id"`
	Phone  string `json:"phone,omitempty"`
	Email  string `json:"email,omitempty"`
	Status string `json:"status"`
	// Token is the signed verification token for the app's backend (docs/browser.md).
	Token string `json:"token,omitempty"`
}

// handleCheck serves POST /v1/verifications/check: 200 when the code approves the
// verification, with its signed token when tok is set. RateLimit headers are added
// whenever the check limiter was asked.
func handleCheck(log *slog.Logger, v otp.Verifier, tok Tokens) http.Handler {
	requests := httpkit.NewDecoder[checkRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := httpkit.ReadJSON(r)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		req, err := requests.Decode(body)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		res, err := v.Check(ctx, otp.CheckInput{App: appFrom(ctx), ID: req.ID, Phone: req.Phone, Email: req.Email, Code: req.Code, ClientIP: httpkit.ClientIPFrom(ctx),
			Transaction: psd2.Transaction{Amount: req.Amount, Payee: req.Payee}})
		setRateLimitHeaders(w.Header(), res.Decision)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		token, err := issueToken(ctx, tok, res.Verification)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		phone, email := addressFields(res.Verification)
		_ = httpkit.Encode(w, http.StatusOK, checkResponse{ID: res.Verification.ID, Phone: phone, Email: email, Status: string(res.Verification.Status), Token: token})
	})
}
