package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// newRedis builds the one client the limiter and idempotency records share, from
// REDIS_URL:
//
//	redis://[user:pass@]host:port[/db]             standalone
//	rediss://...                                   standalone over TLS
//	redis+cluster://[user:pass@]host:port,host:port cluster (rediss+cluster for TLS)
//	redis+sentinel://[user:pass@]host:port,host:port/master-name[?db=N] sentinel (rediss+sentinel for TLS)
//
// Every command is bounded by timeout on the socket and by the caller's context
// (ContextTimeoutEnabled), so a slow Redis fails requests closed instead of hanging them.
// The TLS forms trust the system roots, or only REDIS_CA_FILE when set (tlsFiles).
func newRedis(rawURL string, timeout time.Duration, tlsFiles redisTLS) (redis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("REDIS_URL: missing scheme (want redis://, rediss://, redis+cluster:// or redis+sentinel://)")
	}
	tlsConfig, err := tlsFiles.load()
	if err != nil {
		return nil, err
	}
	tune := func(dial, read, write *time.Duration, ctxTimeout *bool) {
		*dial, *read, *write = max(timeout, time.Second), timeout, timeout
		*ctxTimeout = true
	}
	switch scheme {
	case "redis", "rediss":
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		if opt.TLSConfig != nil {
			tlsConfig.apply(opt.TLSConfig)
		}
		tune(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.ContextTimeoutEnabled)
		return redis.NewClient(opt), nil
	case "redis+cluster", "rediss+cluster":
		u, hosts, err := splitHosts(strings.TrimSuffix(scheme, "+cluster"), rest)
		if err != nil {
			return nil, err
		}
		opt := &redis.ClusterOptions{Addrs: hosts}
		setAuth(u, &opt.Username, &opt.Password)
		if u.Scheme == "rediss" {
			opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: hostOnly(hosts[0])}
			tlsConfig.apply(opt.TLSConfig)
		}
		tune(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.ContextTimeoutEnabled)
		return redis.NewClusterClient(opt), nil
	case "redis+sentinel", "rediss+sentinel":
		u, hosts, err := splitHosts(strings.TrimSuffix(scheme, "+sentinel"), rest)
		if err != nil {
			return nil, err
		}
		master := strings.Trim(u.Path, "/")
		if master == "" {
			return nil, fmt.Errorf("REDIS_URL: sentinel form needs the master name as path, e.g. redis+sentinel://host:26379/mymaster")
		}
		opt := &redis.FailoverOptions{MasterName: master, SentinelAddrs: hosts}
		setAuth(u, &opt.Username, &opt.Password)
		if p, ok := u.User.Password(); ok {
			opt.SentinelPassword = p
		}
		if db := u.Query().Get("db"); db != "" {
			n, err := strconv.Atoi(db)
			if err != nil {
				return nil, fmt.Errorf("REDIS_URL: db=%q is not a number", db)
			}
			opt.DB = n
		}
		if u.Scheme == "rediss" {
			opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			tlsConfig.apply(opt.TLSConfig)
		}
		tune(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.ContextTimeoutEnabled)
		return redis.NewFailoverClient(opt), nil
	default:
		return nil, fmt.Errorf("REDIS_URL: unknown scheme %q (want redis, rediss, redis+cluster or redis+sentinel)", scheme)
	}
}

// redisTLS names the files of REDIS_CA_FILE, REDIS_CLIENT_CERT_FILE and
// REDIS_CLIENT_KEY_FILE; config checks that they come with a TLS URL.
type redisTLS struct {
	caFile, certFile, keyFile string
}

// redisTLSConfig is what the files hold: the roots to trust instead of the system's (nil
// for the system's) and the client certificate to show.
type redisTLSConfig struct {
	roots *x509.CertPool
	certs []tls.Certificate
}

// load reads the files once at start; a server restart picks up renewed certificates.
func (f redisTLS) load() (redisTLSConfig, error) {
	var c redisTLSConfig
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return c, fmt.Errorf("REDIS_CA_FILE: %w", err)
		}
		c.roots = x509.NewCertPool()
		if !c.roots.AppendCertsFromPEM(pem) {
			return c, fmt.Errorf("REDIS_CA_FILE=%s: no PEM certificate in it", f.caFile)
		}
	}
	if f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
		if err != nil {
			return c, fmt.Errorf("REDIS_CLIENT_CERT_FILE, REDIS_CLIENT_KEY_FILE: %w", err)
		}
		c.certs = []tls.Certificate{cert}
	}
	return c, nil
}

// apply puts the roots and the client certificate into a client's TLS config.
func (c redisTLSConfig) apply(tc *tls.Config) {
	if c.roots != nil {
		tc.RootCAs = c.roots
	}
	tc.Certificates = c.certs
}

// splitHosts parses "user:pass@h1:p1,h2:p2/path?query" with the plain scheme given.
func splitHosts(scheme, rest string) (*url.URL, []string, error) {
	hostPart, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		hostPart, tail = rest[:i], rest[i:]
	}
	userinfo := ""
	if i := strings.LastIndex(hostPart, "@"); i >= 0 {
		userinfo, hostPart = hostPart[:i+1], hostPart[i+1:]
	}
	var hosts []string
	for _, h := range strings.Split(hostPart, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return nil, nil, fmt.Errorf("REDIS_URL: no hosts")
	}
	u, err := url.Parse(scheme + "://" + userinfo + hosts[0] + tail)
	if err != nil {
		return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	return u, hosts, nil
}

func setAuth(u *url.URL, user, pass *string) {
	if u.User == nil {
		return
	}
	*user = u.User.Username()
	if p, ok := u.User.Password(); ok {
		*pass = p
	}
}

// hostOnly is the host of "host:port" or "[v6]:port", without brackets, as a TLS
// ServerName must be; anything without a port is returned as is.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return hostport
}
