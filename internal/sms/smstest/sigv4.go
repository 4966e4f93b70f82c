package smstest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sigV4 is what a request signed with AWS Signature Version 4 claims about itself.
type sigV4 struct {
	AccessKeyID, Date, Region, Service string
	SignedHeaders                      []string
	Signature                          string
	Time                               time.Time
}

// checkSigV4 verifies an AWS Signature Version 4 Authorization header as AWS documents
// it: the canonical request (method, path, query, the signed headers, the payload's
// SHA-256), the string to sign over it with the credential scope, and the HMAC chain of
// the secret key over date, region, service and "aws4_request". secret looks up the
// secret key of an access key id ("" for none). It returns the claims and, when they do
// not hold, the AWS error code and why.
func checkSigV4(r *http.Request, body []byte, now time.Time, secret func(string) string) (sigV4, string, error) {
	var c sigV4
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")
	if !ok {
		return c, "MissingAuthenticationToken", fmt.Errorf("authorization %q is not AWS4-HMAC-SHA256", r.Header.Get("Authorization"))
	}
	for part := range strings.SplitSeq(auth, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			scope := strings.Split(v, "/")
			if len(scope) != 5 || scope[4] != "aws4_request" {
				return c, "IncompleteSignature", fmt.Errorf("credential %q", v)
			}
			c.AccessKeyID, c.Date, c.Region, c.Service = scope[0], scope[1], scope[2], scope[3]
		case "SignedHeaders":
			c.SignedHeaders = strings.Split(v, ";")
		case "Signature":
			c.Signature = v
		}
	}
	t, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	switch {
	case c.AccessKeyID == "" || c.Signature == "" || len(c.SignedHeaders) == 0:
		return c, "IncompleteSignature", fmt.Errorf("authorization %q lacks a part", auth)
	case !slices.Contains(c.SignedHeaders, "host") || !slices.Contains(c.SignedHeaders, "x-amz-date") || !slices.IsSorted(c.SignedHeaders):
		return c, "IncompleteSignature", fmt.Errorf("signed headers %v must be sorted and hold host and x-amz-date", c.SignedHeaders)
	case err != nil || t.Format("20060102") != c.Date:
		return c, "IncompleteSignature", fmt.Errorf("X-Amz-Date %q does not match the scope's date %s", r.Header.Get("X-Amz-Date"), c.Date)
	case now.Sub(t) > 15*time.Minute || t.Sub(now) > 15*time.Minute:
		return c, "SignatureDoesNotMatch", fmt.Errorf("signature expired: %s is more than 15 minutes from %s", t, now)
	}
	c.Time = t
	key := secret(c.AccessKeyID)
	if key == "" {
		return c, "InvalidClientTokenId", fmt.Errorf("access key id %q is not the account's", c.AccessKeyID)
	}
	canonical := strings.Join([]string{
		r.Method, escapedPath(r.URL), canonicalQuery(r.URL.Query()), canonicalHeaders(r, c.SignedHeaders),
		strings.Join(c.SignedHeaders, ";"), hexSHA256(body),
	}, "\n")
	toSign := strings.Join([]string{"AWS4-HMAC-SHA256", r.Header.Get("X-Amz-Date"),
		strings.Join([]string{c.Date, c.Region, c.Service, "aws4_request"}, "/"), hexSHA256([]byte(canonical))}, "\n")
	k := hmacSHA256([]byte("AWS4"+key), c.Date)
	for _, s := range []string{c.Region, c.Service, "aws4_request"} {
		k = hmacSHA256(k, s)
	}
	if want := hex.EncodeToString(hmacSHA256(k, toSign)); !hmac.Equal([]byte(want), []byte(c.Signature)) {
		return c, "SignatureDoesNotMatch", fmt.Errorf("the signature is not the secret key's over:\n%s", canonical)
	}
	return c, "", nil
}

func escapedPath(u *url.URL) string {
	if p := u.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

func canonicalQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, awsEscape(k)+"="+awsEscape(v))
		}
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// awsEscape percent-encodes all but the unreserved characters, as SigV4 requires.
func awsEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func canonicalHeaders(r *http.Request, signed []string) string {
	var b strings.Builder
	for _, h := range signed {
		var vs []string
		switch h {
		case "host":
			vs = []string{r.Host}
		case "content-length":
			vs = []string{strconv.FormatInt(r.ContentLength, 10)}
		default:
			vs = r.Header.Values(h)
		}
		for i, v := range vs {
			vs[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(h + ":" + strings.Join(vs, ",") + "\n")
	}
	return b.String()
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return h.Sum(nil)
}
