package http

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/textproto"
	"regexp"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// handleReceipt serves POST /v1/receipts/{kind}/{instance}: a provider's delivery
// callback (Twilio's status callbacks, the webhook receiver's receipts, Telnyx's
// delivery webhooks, Infobip's delivery reports), each checked against its instance's signature. 204 for a genuine
// callback, whether or not it changed a send; 403 invalid_signature for a forged or
// stale one, which changes nothing and is logged at most once a minute (the metrics
// count each); 404 for an instance that takes none.
func handleReceipt(log *slog.Logger, receipts receipt.Receiver) http.Handler {
	forged := newLogLimiter(time.Minute)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, instance := chi.URLParam(r, "kind"), chi.URLParam(r, "instance")
		if !takesReceipts(kind) {
			httpkit.WriteProblem(w, r, log, httpkit.ErrRouteNotFound)
			return
		}
		if receipts == nil || !instanceName.MatchString(instance) {
			httpkit.WriteProblem(w, r, log, httpkit.ErrNoSuchReceiver)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				err = httpkit.ErrTooLarge
			}
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		source := kind + "/" + instance
		err = receipts.Receive(r.Context(), source, receipt.Callback{URI: r.URL.RequestURI(), Header: textproto.MIMEHeader(r.Header), Body: body})
		if errors.Is(err, otp.ErrNotFound) {
			err = httpkit.ErrNoSuchReceiver
		}
		if err != nil {
			if otp.ErrorCode(err) == otp.CodeInvalidSignature {
				if ok, held := forged.allow(); ok {
					log.Warn("delivery callback refused: bad signature", "source", source, "request_id", httpkit.RequestIDFrom(r.Context()),
						"held_back", held)
				}
			}
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// takesReceipts reports whether kind is a provider kind that takes delivery callbacks;
// the API document lists the same ones, and a test holds both equal to the registry's.
func takesReceipts(kind string) bool {
	switch kind {
	case "twilio", "webhook", "telnyx", "infobip", "vonage", "plivo", "sinch":
		return true
	}
	return false
}

// instanceName is the shape of a provider instance's name (SMS_PROVIDERS); any other
// path names no receiver, whatever its body.
var instanceName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
