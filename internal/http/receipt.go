package http

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/textproto"
	"regexp"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/otp"
)

// handleReceipt serves POST /v1/receipts/{kind}/{instance}: a provider's delivery
// callback, Twilio's status callbacks (kind twilio) or the webhook receiver's receipts
// (kind webhook), each checked against its instance's signature. 204 for a genuine
// callback, whether or not it changed a send; 403 invalid_signature for a forged or
// stale one, which changes nothing.
func handleReceipt(log *slog.Logger, receipts otp.ReceiptReceiver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, instance := chi.URLParam(r, "kind"), chi.URLParam(r, "instance")
		if receipts == nil || (kind != "twilio" && kind != "webhook") || !instanceName.MatchString(instance) {
			writeProblem(w, r, log, errRouteNotFound)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				err = errTooLarge
			}
			writeProblem(w, r, log, err)
			return
		}
		source := kind + "/" + instance
		err = receipts.Receive(r.Context(), source, otp.Callback{URI: r.URL.RequestURI(), Header: textproto.MIMEHeader(r.Header), Body: body})
		if errors.Is(err, otp.ErrNotFound) {
			err = errNoSuchReceiver
		}
		if err != nil {
			if otp.ErrorCode(err) == otp.CodeInvalidSignature {
				log.Warn("delivery callback refused: bad signature", "source", source, "request_id", RequestIDFrom(r.Context()))
			}
			writeProblem(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// instanceName is the shape of a provider instance's name (SMS_PROVIDERS); any other
// path names no receiver, whatever its body.
var instanceName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// errNoSuchReceiver is a callback for a provider instance that takes none.
var errNoSuchReceiver = otp.Errorf(otp.CodeNotFound, "no provider instance takes callbacks here")
