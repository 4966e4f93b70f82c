package twilioapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
)

// verificationCheck is Twilio's VerificationCheck resource.
type verificationCheck struct {
	Sid                   string     `json:"sid"`
	ServiceSid            string     `json:"service_sid"`
	AccountSid            string     `json:"account_sid"`
	To                    string     `json:"to"`
	Channel               string     `json:"channel"`
	Status                string     `json:"status"`
	Valid                 bool       `json:"valid"`
	Amount                *string    `json:"amount"`
	Payee                 *string    `json:"payee"`
	DateCreated           string     `json:"date_created"`
	DateUpdated           string     `json:"date_updated"`
	SnaAttemptsErrorCodes []struct{} `json:"sna_attempts_error_codes"`
}

// handleCheck serves POST /v2/Services/{ServiceSid}/VerificationCheck: Code with To or
// VerificationSid, and the Amount and Payee the code was sent for when the service has
// Psd2Enabled: another amount or payee is answered as a wrong code is. A wrong code is an answer, not an error, as in Twilio: 200 with the
// verification's status and valid false; once the wrong guesses are spent, 60202.
func handleCheck(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := form(r); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		in := otp.CheckInput{App: &c.app, Code: strings.TrimSpace(r.PostForm.Get("Code")), ClientIP: c.clientIP, Transaction: transaction(r)}
		in.Phone, in.Email = address(r.PostForm.Get("To"))
		if sid := r.PostForm.Get("VerificationSid"); sid != "" {
			id, ok := apps.IDFromSID(sid, "VE")
			if !ok {
				writeError(w, r, d.Logger, &otp.ErrInvalidRequest{Fields: map[string]string{"id": "must be a verification sid (VE and 32 hex digits)"}})
				return
			}
			in.ID = id
		}
		res, err := d.Verifier.Check(r.Context(), in)
		var wrong *otp.ErrInvalidCode
		if err != nil && !errors.As(err, &wrong) {
			writeError(w, r, d.Logger, withRetryAfter(err, time.Until(res.Verification.ExpiresAt)))
			return
		}
		v := res.Verification
		writeJSON(w, http.StatusOK, verificationCheck{
			Sid: apps.VerificationSID(v.ID), ServiceSid: apps.ServiceSID(c.app.ID), AccountSid: accountSID(c.app),
			To: v.Address, Channel: twilioChannel(v.Channel), Status: status(v), Valid: v.Status == otp.StatusApproved,
			Amount: textOrNil(v.Transaction.Amount), Payee: textOrNil(v.Transaction.Payee),
			DateCreated: twilioTime(v.CreatedAt), DateUpdated: twilioTime(lastChange(v, c.app)),
			SnaAttemptsErrorCodes: []struct{}{},
		})
	})
}
