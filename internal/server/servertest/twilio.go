package servertest

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	twilio "github.com/twilio/twilio-go"
	twclient "github.com/twilio/twilio-go/client"
	verify "github.com/twilio/twilio-go/rest/verify/v2"
)

// rewrite sends every request to base instead of Twilio's host: the HTTP client twilio-go
// takes is its supported hook for that.
type rewrite struct{ base *url.URL }

func (rw rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rw.base.Scheme, rw.base.Host, rw.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TwilioGo is Twilio's Go helper library's Verify v2 client, signed in with an app key
// (keyID, secret) and pointed at api, the public listener, through its HTTP client hook.
func TwilioGo(t *testing.T, api, keyID, secret string) *verify.ApiService {
	t.Helper()
	base, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	c := &twclient.Client{Credentials: twclient.NewCredentials(keyID, secret), HTTPClient: &http.Client{Transport: rewrite{base}}}
	return twilio.NewRestClientWithParams(twilio.ClientParams{Client: c}).VerifyV2
}

// WantTwilioError checks that err is the library's own *client.TwilioRestError with code.
func WantTwilioError(t *testing.T, what string, err error, code, status int) {
	t.Helper()
	var te *twclient.TwilioRestError
	if !errors.As(err, &te) || te.Code != code || te.Status != status {
		t.Errorf("%s: got %v (%T), want TwilioRestError %d with status %d", what, err, err, code, status)
	}
}

// Str is what p points to, or "" for nil: the libraries' fields are pointers.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Rewrite is a transport that sends every request to base instead of Twilio's host.
func Rewrite(base *url.URL) http.RoundTripper { return rewrite{base} }
