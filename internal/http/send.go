package http

import (
	"log/slog"
	"net/http"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/httpkit"
	"otpgate/internal/idempotent"
	"otpgate/internal/otp"
	"otpgate/internal/proof"
	"otpgate/internal/psd2"
	"otpgate/internal/rate"
)

// sendRequest is the body of POST /v1/verifications.
type sendRequest struct {
	Phone string `json:"phone"`
	// Email takes the place of Phone for the email channel.
	Email   string `json:"email"`
	Channel string `json:"channel"`
	Locale  string `json:"locale"`
	// Altcha answers a challenge of a 428 (or a 403 that carried one): the ALTCHA payload,
	// base64 JSON of the challenge with the number found. Captcha is a CAPTCHA token of the
	// operator's provider instead.
	Altcha  string `json:"altcha"`
	Captcha string `json:"captcha"`
	// Amount and Payee are the payment the code confirms, for an app with PSD2.
	Amount string `json:"amount"`
	Payee  string `json:"payee"`
}

// sendResponse is the body of a successful send.
type sendResponse struct {
	ID string `json:"id"`
	// Phone is set for the phone channels, Email for email.
	Phone        string `json:"phone,omitempty"`
	Email        string `json:"email,omitempty"`
	Channel      string `json:"channel"`
	Status       string `json:"status"`
	ExpiresAt    string `json:"expires_at"`
	NextResendAt string `json:"next_resend_at"`
	SendsLeft    int    `json:"sends_left"`
}

// newSendResponse renders a send's result. Times are whole seconds in UTC: the expiry
// rounded down and the next resend rounded up, so a client that trusts them is never late
// with a code nor early with a resend.
func newSendResponse(res otp.SendResult) sendResponse {
	v := res.Verification
	phone, email := addressFields(v)
	return sendResponse{
		ID:           v.ID,
		Phone:        phone,
		Email:        email,
		Channel:      v.Channel,
		Status:       string(v.Status),
		ExpiresAt:    v.ExpiresAt.UTC().Truncate(time.Second).Format(time.RFC3339),
		NextResendAt: ceilTime(res.NextResendAt).UTC().Format(time.RFC3339),
		SendsLeft:    res.SendsLeft,
	}
}

// addressFields puts a verification's address in the field its kind answers in: an
// email address in email, a number in phone.
func addressFields(v otp.Verification) (phone, email string) {
	if contact.IsEmailAddress(v.Address) {
		return "", v.Address
	}
	return v.Address, ""
}

// idempotencyEndpoint names the endpoint of a send's Idempotency-Key: each app has its
// own keys; the default app keeps the name it always had.
func idempotencyEndpoint(app *otp.App) string {
	if app == nil || app.Default {
		return "send"
	}
	return "send:" + app.ID
}

// ceilTime rounds t up to a whole second.
func ceilTime(t time.Time) time.Time {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		return u.Add(time.Second)
	}
	return t
}

// handleSend serves POST /v1/verifications: 201 for a new verification, 200 for a
// resend. Every response carries the RateLimit headers, errors included, except a 503
// from Redis failing before the limiter answered, where Redis is not asked again.
func handleSend(log *slog.Logger, v otp.Verifier, idem idempotent.Store) http.Handler {
	requests := httpkit.NewDecoder[sendRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		fail := func(w http.ResponseWriter, err error, d rate.Decision) {
			setSendRateLimitHeaders(ctx, w.Header(), v, d, err)
			httpkit.WriteProblem(w, r, log, err)
		}

		body, err := httpkit.ReadJSON(r)
		if err != nil {
			fail(w, err, rate.Decision{})
			return
		}
		key, err := idempotencyKey(r.Header)
		if err != nil {
			fail(w, err, rate.Decision{})
			return
		}
		req, err := requests.Decode(body)
		if err != nil {
			fail(w, err, rate.Decision{})
			return
		}

		send := func(w http.ResponseWriter) {
			res, err := v.Send(ctx, otp.SendInput{
				App:   appFrom(ctx),
				Phone: req.Phone, Email: req.Email, Channel: req.Channel, Locale: req.Locale,
				ClientIP: httpkit.ClientIPFrom(ctx), Fingerprint: r.UserAgent(),
				Solution:    proof.Solution{Altcha: req.Altcha, Captcha: req.Captcha},
				Transaction: psd2.Transaction{Amount: req.Amount, Payee: req.Payee},
			})
			if err != nil {
				fail(w, err, res.Decision)
				return
			}
			setSendRateLimitHeaders(ctx, w.Header(), v, res.Decision, nil)
			status := http.StatusOK
			if res.Created {
				status = http.StatusCreated
			}
			_ = httpkit.Encode(w, status, newSendResponse(res))
		}
		if key == "" || idem == nil {
			send(w)
			return
		}
		serveOnce(w, r, log, idem, idempotencyEndpoint(appFrom(ctx)), key, body, send, func(err error) { fail(w, err, rate.Decision{}) })
	})
}
