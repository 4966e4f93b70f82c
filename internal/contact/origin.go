package contact

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

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
