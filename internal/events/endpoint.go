package events

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/otp"
)

// Endpoint is one webhook endpoint of an app.
type Endpoint struct {
	ID    string
	AppID string
	URL   string
	// SecretSealed is the signing secret sealed by a Sealer; the secret itself is shown only
	// in the answer that created the endpoint.
	SecretSealed []byte
	// Types are the event types it gets, in Types order.
	Types     []string
	CreatedAt time.Time
}

// EndpointInput is what an operator gives to add an endpoint.
type EndpointInput struct {
	URL string
	// Secret signs the deliveries; empty means generate one.
	Secret string
	// Types are the event types to deliver; at least one.
	Types []string
}

// Limits of an endpoint's settings.
const (
	maxURLLength    = 2048
	minSecretLength = 16
	maxSecretLength = 256
)

// Validate checks the input and returns it normalised: types deduplicated in Types order,
// a generated secret when none was given. Errors: *otp.ErrInvalidRequest naming each bad field.
func (in EndpointInput) Validate() (EndpointInput, error) {
	fields := map[string]string{}
	in.URL = strings.TrimSpace(in.URL)
	if msg := checkURL(in.URL); msg != "" {
		fields["url"] = msg
	}
	switch n := len(in.Secret); {
	case n == 0:
		in.Secret = NewSecret()
	case n < minSecretLength || n > maxSecretLength:
		fields["secret"] = fmt.Sprintf("must be %d to %d characters", minSecretLength, maxSecretLength)
	case strings.ContainsFunc(in.Secret, func(r rune) bool { return r <= ' ' || r > '~' }):
		fields["secret"] = "must be printable ASCII without spaces"
	}
	types := make([]string, 0, len(in.Types))
	for _, t := range Types() {
		if slices.Contains(in.Types, t) {
			types = append(types, t)
		}
	}
	for _, t := range in.Types {
		if !KnownType(t) {
			fields["event_types"] = fmt.Sprintf("unknown event type %q; known: %s", t, strings.Join(Types(), ", "))
			break
		}
	}
	if len(in.Types) == 0 {
		fields["event_types"] = "name at least one event type: " + strings.Join(Types(), ", ")
	}
	in.Types = types
	if len(fields) > 0 {
		return in, &otp.ErrInvalidRequest{Fields: fields}
	}
	return in, nil
}

// checkURL says what is wrong with an endpoint's URL, or "".
func checkURL(s string) string {
	if s == "" {
		return "is required"
	}
	if len(s) > maxURLLength {
		return fmt.Sprintf("must be at most %d characters", maxURLLength)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return "must be an absolute http or https URL"
	case u.User != nil:
		return "must not hold credentials; the signature authenticates the deliveries"
	case u.Fragment != "":
		return "must not have a fragment"
	}
	return ""
}

// NewSecret returns a fresh random signing secret.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return "whsec_" + hex.EncodeToString(b)
}

// NewID returns a fresh endpoint or event id.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// EventID is the id of the event of type typ about the record key (a verification, send
// or fraud block id), as the stores derive it: one change always has the same id, so a
// change written twice is one event. Postgres computes it as otpgate_event_id.
func EventID(typ, key string) string {
	sum := md5.Sum([]byte(typ + ":" + strings.ToLower(key)))
	return uuid.UUID(sum).String()
}
