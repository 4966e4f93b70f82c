package otp

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// TokenAddress says how a verification token names the address it proves.
type TokenAddress string

// The ways a token names its address.
const (
	// TokenAddressPlain puts the address itself (E.164 or the normalised email) in the
	// token's "address" claim: the browser that typed it can read it anyway.
	TokenAddressPlain TokenAddress = "address"
	// TokenAddressIndex puts the address's keyed index (the HMAC the stores and the
	// limiter key it by) in "address_index" instead, for backends that must not learn it.
	TokenAddressIndex TokenAddress = "index"
)

// Bounds of an app's browser settings.
const (
	// DefaultTokenTTL is how long a verification token lasts unless the app says.
	DefaultTokenTTL = 10 * time.Minute
	// MinTokenTTL and MaxTokenTTL bound it: signing keys are published for MaxTokenTTL
	// after they stop signing, so every token outlives none of its keys.
	MinTokenTTL = 10 * time.Second
	MaxTokenTTL = time.Hour
	// maxOrigins bounds an app's allowed browser origins.
	maxOrigins = 50
)

// validateBrowser checks and normalises the settings of an app's browser callers and
// tokens into f: allowed_origins, token_ttl_seconds, token_address.
func (a *App) validateBrowser(f map[string]string) {
	switch {
	case a.TokenTTL == 0:
		a.TokenTTL = DefaultTokenTTL
	case a.TokenTTL < MinTokenTTL || a.TokenTTL > MaxTokenTTL:
		f["token_ttl_seconds"] = fmt.Sprintf("must be between %d and %d", int(MinTokenTTL/time.Second), int(MaxTokenTTL/time.Second))
	}
	switch a.TokenAddress {
	case "":
		a.TokenAddress = TokenAddressPlain
	case TokenAddressPlain, TokenAddressIndex:
	default:
		f["token_address"] = `must be "address" or "index"`
	}
	if len(a.AllowedOrigins) > maxOrigins {
		f["allowed_origins"] = fmt.Sprintf("must have at most %d entries", maxOrigins)
		return
	}
	out := make([]string, 0, len(a.AllowedOrigins))
	for _, o := range a.AllowedOrigins {
		canon, err := CanonOrigin(o)
		if err != nil {
			f["allowed_origins"] = fmt.Sprintf("%q %s", o, err)
			return
		}
		out = append(out, canon)
	}
	slices.Sort(out)
	a.AllowedOrigins = slices.Compact(out)
	if len(a.AllowedOrigins) == 0 {
		a.AllowedOrigins = nil
	}
	if a.AllowedOrigins != nil && a.Access == AccessKey {
		// A browser page could only call it with the key in the page, for anyone to read.
		f["allowed_origins"] = "a key app takes no calls from browsers (its key would be in the page): make it public, or list no origins"
	}
}

// CanonOrigin returns a browser origin as browsers send it in the Origin header:
// scheme, lower-case host and the port only when it is not the scheme's default. Only
// https origins are taken, and http ones on loopback hosts for development.
func CanonOrigin(o string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("is not an origin such as https://app.example.com (scheme, host and port only)")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	switch {
	case u.Scheme == "https":
		if port == "443" {
			port = ""
		}
	case u.Scheme == "http" && loopbackHost(host):
		if port == "80" {
			port = ""
		}
	default:
		return "", fmt.Errorf("must be https (http only for localhost, 127.0.0.1 and [::1])")
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// AllowsOrigin reports whether a browser page of origin (the Origin header) may call
// the app: only the origins it lists.
func (a App) AllowsOrigin(origin string) bool {
	return origin != "" && slices.Contains(a.AllowedOrigins, origin)
}
