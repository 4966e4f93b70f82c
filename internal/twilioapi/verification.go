package twilioapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/psd2"
	"otpgate/internal/rate"
)

// unsupported are Twilio parameters that would change what is sent or how it is
// checked in ways otpgate does not offer; they are refused rather than ignored, so
// that nobody believes, say, their CustomCode was sent.
var unsupported = []string{
	"CustomCode", "CustomMessage", "SendDigits",
	"TemplateCustomSubstitutions", "ChannelConfiguration", "AppHash",
}

// refused names each of the parameters that the request holds.
func refused(r *http.Request, params []string) map[string]string {
	fields := map[string]string{}
	for _, p := range params {
		if r.PostForm.Has(p) {
			fields[p] = "is not supported by otpgate"
		}
	}
	return fields
}

// verification is Twilio's Verification resource.
type verification struct {
	Sid              string        `json:"sid"`
	ServiceSid       string        `json:"service_sid"`
	AccountSid       string        `json:"account_sid"`
	To               string        `json:"to"`
	Channel          string        `json:"channel"`
	Status           string        `json:"status"`
	Valid            bool          `json:"valid"`
	Lookup           struct{}      `json:"lookup"`
	Amount           *string       `json:"amount"`
	Payee            *string       `json:"payee"`
	SendCodeAttempts []sendAttempt `json:"send_code_attempts"`
	DateCreated      string        `json:"date_created"`
	DateUpdated      string        `json:"date_updated"`
	Sna              *struct{}     `json:"sna"`
	URL              string        `json:"url"`
}

// sendAttempt is one send of a verification, as Twilio lists them.
type sendAttempt struct {
	AttemptSid string `json:"attempt_sid"`
	Channel    string `json:"channel"`
	Time       string `json:"time"`
}

// twilioTime writes times as Twilio's JSON does: RFC 3339 in UTC, whole seconds.
func twilioTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// status is a verification's status in Twilio's words: a verification whose wrong
// guesses are spent is max_attempts_reached, and one whose first message definitely
// failed (canceled with no send left counted) is failed.
func status(v otp.Verification) string {
	switch v.Status {
	case otp.StatusFailed:
		return "max_attempts_reached"
	case otp.StatusCanceled:
		if v.Sends == 0 {
			return "failed"
		}
	}
	return string(v.Status)
}

// accountSID is the account the answers name: otpgate has none, so it is the app's hex in an AC sid.
func accountSID(app otp.App) string { return "AC" + strings.TrimPrefix(apps.ServiceSID(app.ID), "VA") }

// lastChange is when the verification last changed: its closing, else its latest send.
func lastChange(v otp.Verification, app otp.App) time.Time {
	if !v.ClosedAt.IsZero() {
		return v.ClosedAt
	}
	return v.LastSentAt(app.CodeTTL)
}

// newVerification renders v; base is the public URL its url starts with.
func newVerification(base string, app otp.App, v otp.Verification) verification {
	sid := apps.VerificationSID(v.ID)
	out := verification{
		Sid: sid, ServiceSid: apps.ServiceSID(app.ID), AccountSid: accountSID(app), To: v.Address, Channel: twilioChannel(v.Channel),
		Status: status(v), Valid: v.Status == otp.StatusApproved, Amount: textOrNil(v.Transaction.Amount), Payee: textOrNil(v.Transaction.Payee),
		DateCreated: twilioTime(v.CreatedAt), DateUpdated: twilioTime(lastChange(v, app)),
		URL: base + "/v2/Services/" + apps.ServiceSID(app.ID) + "/Verifications/" + sid,
	}
	// The store keeps the count of sends, not each one's time: the first is the
	// verification's creation, every later one is shown at the latest send.
	for i := range v.Sends {
		at := v.CreatedAt
		if i > 0 {
			at = v.LastSentAt(app.CodeTTL)
		}
		out.SendCodeAttempts = append(out.SendCodeAttempts, sendAttempt{
			AttemptSid: "VL" + strings.TrimPrefix(sid, "VE")[:30] + twoHex(i), Channel: twilioChannel(v.Channel), Time: twilioTime(at),
		})
	}
	if out.SendCodeAttempts == nil {
		out.SendCodeAttempts = []sendAttempt{}
	}
	return out
}

// transaction reads PSD2's Amount and Payee; the domain requires them of an app with
// PSD2 enabled and refuses them of any other.
func transaction(r *http.Request) psd2.Transaction {
	return psd2.Transaction{Amount: r.PostForm.Get("Amount"), Payee: r.PostForm.Get("Payee")}
}

// textOrNil is s, or null when it is empty, as Twilio writes absent fields.
func textOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func twoHex(i int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[(i>>4)&15], digits[i&15]})
}

// sentOn makes the answer to a send show that send's channel: the verification's own is
// its first send's, and a resend may take another.
func (out *verification) sentOn(channel string) {
	if channel == "" || len(out.SendCodeAttempts) == 0 {
		return
	}
	out.Channel = twilioChannel(channel)
	out.SendCodeAttempts[len(out.SendCodeAttempts)-1].Channel = out.Channel
}

// handleCreate serves POST /v2/Services/{ServiceSid}/Verifications: To, Channel,
// Locale, CustomFriendlyName, and Amount and Payee for a service with Psd2Enabled. A resend of a pending verification answers 201, as
// Twilio does, with the channel it went out on.
func handleCreate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := form(r); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		fields := refused(r, unsupported)
		if strings.TrimSpace(r.PostForm.Get("To")) == "" {
			fields["phone"] = "is required"
		}
		if problem := templateSidProblem(r, c.app); problem != "" {
			fields["TemplateSid"] = problem
		}
		if len(fields) > 0 {
			writeError(w, r, d.Logger, &otp.ErrInvalidRequest{Fields: fields})
			return
		}
		in := otp.SendInput{
			App: &c.app, Channel: channel(r.PostForm.Get("Channel")),
			Locale: r.PostForm.Get("Locale"), FriendlyName: r.PostForm.Get("CustomFriendlyName"),
			ClientIP: c.clientIP, Fingerprint: r.UserAgent(), Transaction: transaction(r),
		}
		in.Phone, in.Email = address(r.PostForm.Get("To"))
		limits, err := rateLimitsOf(r, d, c.app)
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		in.RateLimits = limits
		res, err := d.Verifier.Send(r.Context(), in)
		if err != nil {
			writeError(w, r, d.Logger, withRetryAfter(err, res.Decision.RetryAfter()))
			return
		}
		out := newVerification(d.PublicURL, c.app, res.Verification)
		out.sentOn(res.Channel)
		writeJSON(w, http.StatusCreated, out)
	})
}

// rateLimitsOf reads RateLimits of a create into the app's keyed limits. Errors:
// *otp.ErrInvalidRequest for a malformed value or a name the service has no rate limit of.
func rateLimitsOf(r *http.Request, d Deps, app otp.App) ([]rate.KeyedLimit, error) {
	values, err := sendRateLimits(r)
	if err != nil || len(values) == 0 {
		return nil, err
	}
	if d.RateLimits == nil {
		return nil, &otp.ErrInvalidRequest{Fields: map[string]string{"RateLimits": "is not supported by this server"}}
	}
	return d.RateLimits.SendLimits(r.Context(), app.ID, values)
}

// channel is Twilio's channel name in otpgate's: Twilio calls a voice call "call".
// Any other is passed on, for the domain to accept or refuse.
func channel(twilio string) string {
	ch := strings.ToLower(strings.TrimSpace(twilio))
	if ch == "call" {
		return otp.ChannelVoice
	}
	return ch
}

// twilioChannel is otpgate's channel in Twilio's words.
func twilioChannel(ch string) string {
	if ch == otp.ChannelVoice {
		return "call"
	}
	return ch
}

// address reads To: an email address (it holds an @) for the email channel, else a
// phone number.
func address(to string) (phone, email string) {
	if contact.IsEmailAddress(to) {
		return "", to
	}
	return to, ""
}

// verificationID reads a VE sid from the URL; anything else names no verification.
func verificationID(r *http.Request) (string, error) {
	id, ok := apps.IDFromSID(chi.URLParam(r, "Sid"), "VE")
	if !ok {
		return "", errNoResource
	}
	return id, nil
}

// handleFetch serves GET /v2/Services/{ServiceSid}/Verifications/{Sid}.
func handleFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := verificationID(r)
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		v, err := d.Manager.Verification(r.Context(), &c.app, id)
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		writeJSON(w, http.StatusOK, newVerification(d.PublicURL, c.app, v))
	})
}

// handleUpdate serves POST /v2/Services/{ServiceSid}/Verifications/{Sid} with
// Status=canceled or Status=approved.
func handleUpdate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := verificationID(r)
		if err == nil {
			err = form(r)
		}
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		v, err := d.Manager.Close(r.Context(), &c.app, id, otp.Status(r.PostForm.Get("Status")))
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		writeJSON(w, http.StatusOK, newVerification(d.PublicURL, c.app, v))
	})
}
