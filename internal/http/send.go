package http

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// sendRequest is the body of POST /v1/verifications.
type sendRequest struct {
	Phone   string `json:"phone"`
	Channel string `json:"channel"`
	Locale  string `json:"locale"`
}

// validate lists the field problems the API can see without the service.
func (req sendRequest) validate() map[string]string {
	problems := map[string]string{}
	if strings.TrimSpace(req.Phone) == "" {
		problems["phone"] = "is required"
	}
	if req.Channel != "" && req.Channel != "sms" {
		problems["channel"] = `must be "sms"`
	}
	if req.Locale != "" && req.Locale != "en" && req.Locale != "ja" {
		problems["locale"] = `must be "en" or "ja"`
	}
	return problems
}

// sendResponse is the body of a successful send.
type sendResponse struct {
	ID           string `json:"id"`
	Phone        string `json:"phone"`
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
	return sendResponse{
		ID:           v.ID,
		Phone:        v.Phone,
		Channel:      v.Channel,
		Status:       string(v.Status),
		ExpiresAt:    v.ExpiresAt.UTC().Truncate(time.Second).Format(time.RFC3339),
		NextResendAt: ceilTime(res.NextResendAt).UTC().Format(time.RFC3339),
		SendsLeft:    res.SendsLeft,
	}
}

// ceilTime rounds t up to a whole second.
func ceilTime(t time.Time) time.Time {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		return u.Add(time.Second)
	}
	return t
}

// handleSend serves POST /v1/verifications: 201 for a new verification, 200 for a
// resend. Every response, errors included, carries the RateLimit headers.
func handleSend(log *slog.Logger, v Verifier, idem Idempotency) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		fail := func(w http.ResponseWriter, err error, d otp.Decision) {
			// When Redis is what failed, asking it again for the headers would only
			// double the time to the 503 that fails the request closed.
			if !errors.Is(err, otp.ErrUnavailable) {
				setSendRateLimitHeaders(ctx, w.Header(), v, decisionOf(d, err))
			}
			writeProblem(w, r, log, err)
		}

		body, err := readJSON(r)
		if err != nil {
			fail(w, err, otp.Decision{})
			return
		}
		key, err := idempotencyKey(r.Header)
		if err != nil {
			fail(w, err, otp.Decision{})
			return
		}
		req, err := decode[sendRequest](body)
		if err != nil {
			fail(w, err, otp.Decision{})
			return
		}
		if problems := req.validate(); len(problems) > 0 {
			fail(w, &requestError{detail: "the request has invalid fields", fields: problems}, otp.Decision{})
			return
		}

		send := func(w http.ResponseWriter) {
			res, err := v.Send(ctx, otp.SendInput{
				Phone: req.Phone, Channel: req.Channel, Locale: req.Locale,
				ClientIP: clientIPFrom(ctx), Fingerprint: r.UserAgent(),
			})
			if err != nil {
				fail(w, err, res.Decision)
				return
			}
			setSendRateLimitHeaders(ctx, w.Header(), v, res.Decision)
			status := http.StatusOK
			if res.Created {
				status = http.StatusCreated
			}
			_ = encode(w, status, newSendResponse(res))
		}
		if key == "" || idem == nil {
			send(w)
			return
		}
		serveOnce(w, r, log, idem, "send", key, body, send, func(err error) { fail(w, err, otp.Decision{}) })
	})
}
