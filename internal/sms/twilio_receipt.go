package sms

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// TwilioSignatureHeader carries Twilio's signature of a callback.
const TwilioSignatureHeader = "X-Twilio-Signature"

// TwilioSignature is what Twilio puts in X-Twilio-Signature for a POST of form to
// fullURL: base64(HMAC-SHA1(auth token, URL followed by each parameter name and value,
// names sorted, a name's values sorted)).
func TwilioSignature(authToken, fullURL string, form url.Values) string {
	h := hmac.New(sha1.New, []byte(authToken))
	h.Write([]byte(fullURL))
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vals := slices.Clone(form[k])
		slices.Sort(vals)
		for _, v := range vals {
			h.Write([]byte(k))
			h.Write([]byte(v))
		}
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// VerifyTwilioSignature checks sig against the form posted to fullURL. Twilio signs
// an https URL with or without its default port, so both spellings are tried.
func VerifyTwilioSignature(authToken, fullURL string, form url.Values, sig string) bool {
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(got) != sha1.Size || authToken == "" {
		return false
	}
	ok := false
	for _, u := range urlSpellings(fullURL) {
		want, _ := base64.StdEncoding.DecodeString(TwilioSignature(authToken, u, form))
		if hmac.Equal(got, want) {
			ok = true
		}
	}
	return ok
}

// urlSpellings is the URL as given and with its default port added or removed.
func urlSpellings(s string) []string {
	u, err := url.Parse(s)
	if err != nil {
		return []string{s}
	}
	def := map[string]string{"https": "443", "http": "80"}[u.Scheme]
	other := *u
	switch {
	case u.Port() == "" && def != "":
		other.Host = u.Host + ":" + def
	case u.Port() == def:
		other.Host = u.Hostname()
	default:
		return []string{s}
	}
	return []string{s, other.String()}
}

// Final delivery states in Twilio's status callbacks. Anything else (queued, sending,
// sent, ringing, in-progress) is a step on the way and changes nothing.
var (
	twilioDelivered   = map[string]bool{"delivered": true, "read": true, "completed": true}
	twilioUndelivered = map[string]bool{"undelivered": true, "failed": true, "busy": true, "no-answer": true, "canceled": true}
)

// ReadReceipt implements receipt.Reader for this account's status callbacks, for
// messages (MessageSid, MessageStatus) and calls (CallSid, CallStatus); a genuine callback
// with a NUL or invalid UTF-8 in a parameter is *otp.ErrInvalidText. The signature
// must be the account's over the status callback URL the message was created with (so
// a proxy in front of otpgate that rewrites the path changes nothing), and AccountSid
// must be the account's. A sender without a status callback accepts no callback.
func (t *Twilio) ReadReceipt(c receipt.Callback, now time.Time) (receipt.Receipt, bool, error) {
	form, err := url.ParseQuery(string(c.Body))
	if t.callback == "" || err != nil ||
		!VerifyTwilioSignature(t.token, t.callback, form, c.Header.Get(TwilioSignatureHeader)) ||
		subtle.ConstantTimeCompare([]byte(form.Get("AccountSid")), []byte(t.sid)) != 1 {
		return receipt.Receipt{}, false, receipt.ErrBadSignature
	}
	// Signed by Twilio or not, a NUL or invalid UTF-8 in a parameter is no SID or status
	// otpgate sent or can keep: refused, naming it, before anything is looked up. The
	// price is the exception: it is only read, never kept as text, and a price that cannot
	// be read must not cost the delivery its receipt (twilioPrice).
	for name, vs := range form {
		if p := otp.TextProblem(name); p != "" {
			return receipt.Receipt{}, false, &otp.ErrInvalidText{Field: "name", Problem: "parameter names " + p}
		}
		if name == "Price" || name == "PriceUnit" {
			continue
		}
		for _, v := range vs {
			if err := otp.CheckText(name, v); err != nil {
				return receipt.Receipt{}, false, err
			}
		}
	}
	rc, ok := twilioReceipt(form)
	if !ok {
		return receipt.Receipt{}, false, nil
	}
	rc.Provider, rc.Time = t.name, now.UTC()
	rc.Price, rc.PriceIgnored = twilioPrice(form)
	return rc, true, nil
}

// twilioPrice reads what Twilio charged from a callback's Price and PriceUnit: an amount
// such as "-0.00750" (Twilio writes charges as negative numbers) in an ISO 4217 currency
// such as "USD". No Price, or an empty one (not yet known), is no price; one that cannot
// be read is no price either, with the reason.
func twilioPrice(form url.Values) (receipt.Price, string) {
	amount, unit := form.Get("Price"), form.Get("PriceUnit")
	if amount == "" {
		return receipt.Price{}, ""
	}
	micros, ok := micros(strings.TrimPrefix(amount, "-"))
	switch {
	case !ok || len(form["Price"]) > 1:
		return receipt.Price{}, "Price is not one decimal amount"
	case !currencyCode(unit) || len(form["PriceUnit"]) > 1:
		return receipt.Price{}, "PriceUnit is not a currency code"
	}
	return receipt.Price{Micros: micros, Currency: unit}, ""
}

// micros reads an unsigned decimal amount with at most six decimals and seven whole
// digits, such as "0.0075", into millionths.
func micros(s string) (int64, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" && frac == "" || dot && frac == "" || len(whole) > 7 || len(frac) > 6 ||
		!allDigits(whole) || !allDigits(frac) {
		return 0, false
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return w*1_000_000 + f, true
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// currencyCode reports whether s has the shape of an ISO 4217 code: three capitals.
func currencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range []byte(s) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// twilioReceipt reads a final state from a callback's form.
func twilioReceipt(form url.Values) (receipt.Receipt, bool) {
	sid, status := form.Get("MessageSid"), form.Get("MessageStatus")
	if sid == "" {
		sid, status = form.Get("CallSid"), form.Get("CallStatus")
	}
	var rc receipt.Receipt
	switch {
	case sid == "":
		return rc, false
	case twilioDelivered[status]:
		rc.Status = receipt.DeliveryDelivered
	case twilioUndelivered[status]:
		rc.Status = receipt.DeliveryUndelivered
		rc.Error = status
		if code := form.Get("ErrorCode"); code != "" {
			rc.Error = snippet(code, "")
		}
	default:
		return rc, false
	}
	rc.ProviderID = sid
	return rc, true
}
