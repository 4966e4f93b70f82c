package sms

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/receipt"
)

// Vonage's signature methods, as VONAGE_SIGNATURE_METHOD names the algorithms its
// dashboard offers: "MD5 hash" (the default), "MD5 HMAC", "SHA1 HMAC", "SHA-256 HMAC"
// and "SHA-512 HMAC".
const (
	VonageMD5Hash    = "md5hash"
	VonageMD5HMAC    = "md5"
	VonageSHA1HMAC   = "sha1"
	VonageSHA256HMAC = "sha256"
	VonageSHA512HMAC = "sha512"
)

// VonageSignatureMethods lists the signature methods.
func VonageSignatureMethods() []string {
	return []string{VonageMD5Hash, VonageMD5HMAC, VonageSHA1HMAC, VonageSHA256HMAC, VonageSHA512HMAC}
}

// vonageSigned writes the string Vonage signs: every parameter but sig whose value is not
// blank, sorted by name, each as "&name=value" with any "&" or "=" in the name or value
// replaced by "_".
func vonageSigned(params map[string]string) string {
	names := make([]string, 0, len(params))
	for name, v := range params {
		if name != "sig" && strings.TrimSpace(v) != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	clean := strings.NewReplacer("&", "_", "=", "_")
	var b strings.Builder
	for _, name := range names {
		b.WriteString("&" + clean.Replace(name) + "=" + clean.Replace(params[name]))
	}
	return b.String()
}

// VonageSignature is the sig parameter Vonage sends with params: lower-case hex of
// MD5(signed string + secret) for VonageMD5Hash, else of HMAC(secret, signed string)
// with the method's hash. An unknown method signs nothing ("").
func VonageSignature(secret, method string, params map[string]string) string {
	signed := vonageSigned(params)
	var h hash.Hash
	switch method {
	case VonageMD5Hash:
		sum := md5.Sum([]byte(signed + secret))
		return hex.EncodeToString(sum[:])
	case VonageMD5HMAC:
		h = hmac.New(md5.New, []byte(secret))
	case VonageSHA1HMAC:
		h = hmac.New(sha1.New, []byte(secret))
	case VonageSHA256HMAC:
		h = hmac.New(sha256.New, []byte(secret))
	case VonageSHA512HMAC:
		h = hmac.New(sha512.New, []byte(secret))
	default:
		return ""
	}
	h.Write([]byte(signed))
	return hex.EncodeToString(h.Sum(nil))
}

// vonageParams reads a delivery receipt's parameters: a form, or with the account's
// webhooks set to POST-JSON a JSON object of strings (a number or boolean is taken as
// written, as Vonage's own libraries read one).
func vonageParams(c receipt.Callback) (map[string]string, error) {
	media, _, _ := mime.ParseMediaType(c.Header.Get("Content-Type"))
	if media != "application/json" {
		form, err := url.ParseQuery(string(c.Body))
		if err != nil {
			return nil, err
		}
		return singleValues(form)
	}
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(c.Body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for name, v := range raw {
		switch v := v.(type) {
		case string:
			out[name] = v
		case json.Number:
			out[name] = v.String()
		case bool:
			out[name] = strconv.FormatBool(v)
		case nil:
		default:
			return nil, fmt.Errorf("parameter %q is not a string", snippet(name, ""))
		}
	}
	return out, nil
}

// verify checks a receipt's signature, its age and its account.
func (v *Vonage) verify(params map[string]string, now time.Time) error {
	got, err := hex.DecodeString(params["sig"])
	want, _ := hex.DecodeString(VonageSignature(v.sigSecret, v.sigMethod, params))
	switch {
	case v.sigSecret == "":
		return errors.New("this instance reads no receipts")
	case params["sig"] == "" || err != nil || !hmac.Equal(got, want):
		return errors.New("sig does not match")
	case subtle.ConstantTimeCompare([]byte(params["api-key"]), []byte(v.key)) != 1:
		return errors.New("another account's receipt")
	}
	at, err := strconv.ParseInt(params["timestamp"], 10, 64)
	if err != nil || now.Sub(time.Unix(at, 0)).Abs() > DefaultTolerance {
		return errors.New("timestamp missing or too far from now")
	}
	return nil
}

// Final delivery states in Vonage's receipts; the others (accepted, buffered, unknown)
// change nothing.
var (
	vonageDelivered   = map[string]bool{"delivered": true}
	vonageUndelivered = map[string]bool{"expired": true, "failed": true, "rejected": true}
)

// ReadReceipt implements receipt.Reader for this account's delivery receipts, posted
// as a form or as JSON. The signature (sig, over every other parameter with the
// signature secret and method) must be good, its timestamp within DefaultTolerance of now
// and api-key this account's; a sender without a signature secret accepts none. A genuine
// receipt with a NUL or invalid UTF-8 in a parameter is *otp.ErrInvalidText. messageId
// names the send (the id of a message's first part: receipts of later parts name no
// send); status delivered marks it delivered, expired, failed and rejected undelivered
// with err-code; the price is not read, as the receipt does not name its currency.
func (v *Vonage) ReadReceipt(c receipt.Callback, now time.Time) (receipt.Receipt, bool, error) {
	params, err := vonageParams(c)
	if err == nil {
		err = v.verify(params, now)
	}
	if err != nil {
		return receipt.Receipt{}, false, fmt.Errorf("%s: %w: %v", v.name, receipt.ErrBadSignature, err)
	}
	if err := checkParams(params); err != nil {
		return receipt.Receipt{}, false, err
	}
	id, status := params["messageId"], params["status"]
	var rc receipt.Receipt
	switch {
	case id == "":
		return rc, false, nil
	case vonageDelivered[status]:
		rc.Status = receipt.DeliveryDelivered
	case vonageUndelivered[status]:
		rc.Status = receipt.DeliveryUndelivered
		rc.Error = status
		if code := params["err-code"]; code != "" && code != "0" {
			rc.Error = snippet(code, "")
		}
	default:
		return rc, false, nil
	}
	rc.ProviderID, rc.Provider, rc.Time = id, v.name, now.UTC()
	return rc, true, nil
}
