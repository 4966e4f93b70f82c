package sms

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	"otpgate/internal/receipt"
)

// Plivo's signature headers. Messaging's documentation describes V2, which covers the URL
// and a nonce; V3 also covers the parameters. The Ma- headers are signed with the main
// account's token, the others with the (sub)account's.
const (
	PlivoSignatureV2Header   = "X-Plivo-Signature-V2"
	PlivoSignatureMaV2Header = "X-Plivo-Signature-Ma-V2"
	PlivoNonceV2Header       = "X-Plivo-Signature-V2-Nonce"
	PlivoSignatureV3Header   = "X-Plivo-Signature-V3"
	PlivoSignatureMaV3Header = "X-Plivo-Signature-Ma-V3"
	PlivoNonceV3Header       = "X-Plivo-Signature-V3-Nonce"
)

// plivoBase is a URL without its query: what V2 signs.
func plivoBase(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// PlivoSignatureV2 is what Plivo puts in X-Plivo-Signature-V2 for a request to uri:
// base64(HMAC-SHA256(auth token, the URL without its query, followed by the nonce)).
func PlivoSignatureV2(authToken, uri, nonce string) string {
	mac := hmac.New(sha256.New, []byte(authToken))
	mac.Write([]byte(plivoBase(uri) + nonce))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// PlivoSignatureV3 is what Plivo puts in X-Plivo-Signature-V3 for a POST of form to uri
// (a URL without a query, as otpgate's callbacks are): base64(HMAC-SHA256(auth token,
// the URL, then "?" and each parameter's name and value, names sorted, a name's values
// sorted, when there are any, then "." and the nonce)).
func PlivoSignatureV3(authToken, uri, nonce string, form url.Values) string {
	var b strings.Builder
	b.WriteString(plivoBase(uri))
	if len(form) > 0 {
		b.WriteString("?")
	}
	names := make([]string, 0, len(form))
	for name := range form {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range slices.Sorted(slices.Values(form[name])) {
			b.WriteString(name + v)
		}
	}
	b.WriteString("." + nonce)
	mac := hmac.New(sha256.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// plivoMatch reports whether one of the comma-separated signatures in the headers named
// is want, compared in constant time.
func plivoMatch(h textproto.MIMEHeader, want string, names ...string) bool {
	ok := false
	for _, name := range names {
		for _, sig := range strings.Split(h.Get(name), ",") {
			if sig = strings.TrimSpace(sig); sig != "" && hmac.Equal([]byte(sig), []byte(want)) {
				ok = true
			}
		}
	}
	return ok
}

// verify checks a callback's signature over the callback URL the message was sent with:
// V3 when Plivo sent it (it also covers the parameters), else V2.
func (p *Plivo) verify(h textproto.MIMEHeader, form url.Values) error {
	switch {
	case p.callback == "":
		return errors.New("this instance asks for no callbacks")
	case h.Get(PlivoNonceV3Header) != "" && (h.Get(PlivoSignatureV3Header) != "" || h.Get(PlivoSignatureMaV3Header) != ""):
		if !plivoMatch(h, PlivoSignatureV3(p.token, p.callback, h.Get(PlivoNonceV3Header), form), PlivoSignatureV3Header, PlivoSignatureMaV3Header) {
			return errors.New("X-Plivo-Signature-V3 does not match")
		}
	case h.Get(PlivoNonceV2Header) == "":
		return errors.New("no signature")
	case !plivoMatch(h, PlivoSignatureV2(p.token, p.callback, h.Get(PlivoNonceV2Header)), PlivoSignatureV2Header, PlivoSignatureMaV2Header):
		return errors.New("X-Plivo-Signature-V2 does not match")
	}
	return nil
}

// Final states in Plivo's status callbacks; queued and sent are steps and change nothing.
var (
	plivoDelivered   = map[string]bool{"delivered": true, "read": true}
	plivoUndelivered = map[string]bool{"failed": true, "undelivered": true, "rejected": true}
)

// ReadReceipt implements receipt.Reader for this account's message status callbacks
// (form-encoded, as otpgate asks for them with method POST). The signature must be the
// account's auth token's over the callback URL the message was sent with: V3 (the URL,
// the parameters and a nonce) when Plivo sends it, else V2 (the URL and a nonce), either
// the (sub)account's header or the main account's (Ma-). A sender without a callback
// accepts none. A genuine callback with a NUL or invalid UTF-8 in a parameter is
// *otp.ErrInvalidText. MessageUUID names the send; Status delivered marks it delivered,
// failed, undelivered and rejected undelivered with ErrorCode. TotalAmount is not read:
// the callback does not name its currency.
func (p *Plivo) ReadReceipt(c receipt.Callback, now time.Time) (receipt.Receipt, bool, error) {
	form, err := url.ParseQuery(string(c.Body))
	if err == nil {
		err = p.verify(c.Header, form)
	}
	var params map[string]string
	if err == nil {
		params, err = singleValues(form)
	}
	if err != nil {
		return receipt.Receipt{}, false, fmt.Errorf("%s: %w: %v", p.name, receipt.ErrBadSignature, err)
	}
	if err := checkParams(params); err != nil {
		return receipt.Receipt{}, false, err
	}
	id, status := params["MessageUUID"], params["Status"]
	var rc receipt.Receipt
	switch {
	case id == "":
		return rc, false, nil
	case plivoDelivered[status]:
		rc.Status = receipt.DeliveryDelivered
	case plivoUndelivered[status]:
		rc.Status = receipt.DeliveryUndelivered
		rc.Error = status
		if code := params["ErrorCode"]; code != "" {
			rc.Error = snippet(code, "")
		}
	default:
		return rc, false, nil
	}
	rc.ProviderID, rc.Provider, rc.Time = id, p.name, now.UTC()
	return rc, true, nil
}
