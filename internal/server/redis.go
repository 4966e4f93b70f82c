package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
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
// go-redis parses every form, so its URL options (such as ?pool_size=20) work in each.
// Every command is bounded by timeout on the socket and by the caller's context
// (ContextTimeoutEnabled), so a slow Redis fails requests closed instead of hanging them.
// The TLS forms trust the system roots, or only REDIS_CA_FILE when set (tlsFiles).
func newRedis(rawURL string, timeout time.Duration, tlsFiles redisTLS) (redis.UniversalClient, error) {
	o, err := parseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	files, err := tlsFiles.load()
	if err != nil {
		return nil, err
	}
	o.settle(files, timeout)
	return o.client(), nil
}

// redisOptions is what REDIS_URL parses to: exactly one of the three is set.
type redisOptions struct {
	simple   *redis.Options
	cluster  *redis.ClusterOptions
	failover *redis.FailoverOptions
}

// parseRedisURL reads the standalone form with go-redis as it is, and the cluster and
// sentinel forms after spelling them the way go-redis reads them (goRedisURL).
func parseRedisURL(rawURL string) (redisOptions, error) {
	var o redisOptions
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return o, errors.New("REDIS_URL: missing scheme (want redis://, rediss://, redis+cluster:// or redis+sentinel://)")
	}
	var err error
	switch scheme {
	case "redis", "rediss":
		o.simple, err = redis.ParseURL(rawURL)
	case "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel":
		plain, form, _ := strings.Cut(scheme, "+")
		var u string
		if u, err = goRedisURL(plain, rest, form == "sentinel"); err != nil {
			break
		}
		if form == "cluster" {
			o.cluster, err = redis.ParseClusterURL(u)
		} else {
			o.failover, err = parseFailoverURL(u)
		}
	default:
		return o, fmt.Errorf("REDIS_URL: unknown scheme %q (want redis, rediss, redis+cluster or redis+sentinel)", scheme)
	}
	if err != nil {
		// A *url.Error quotes the whole URL, password and all; its cause says enough.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return redisOptions{}, fmt.Errorf("REDIS_URL: %w", err)
	}
	return o, nil
}

// goRedisURL spells our multi-host form the way go-redis' parsers read it: the first host
// in the authority and the others as addr options; with masterInPath (sentinel) the
// master name moves from the path to the master_name option, as go-redis reads a path
// as a database number. User, password and every other option stay for go-redis to read.
func goRedisURL(scheme, rest string, masterInPath bool) (string, error) {
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
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		// go-redis would give the first host a default port (6379, wrong for a sentinel)
		// and refuse the others without one; every host names its port instead.
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			return "", fmt.Errorf("host %q: want host:port", h)
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return "", errors.New("no hosts")
	}
	u, err := url.Parse(scheme + "://" + userinfo + hosts[0] + tail)
	if err != nil {
		return "", err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", err
	}
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	if masterInPath {
		master := strings.Trim(u.Path, "/")
		if master == "" || strings.Contains(master, "/") {
			return "", errors.New("sentinel form needs the master name as path, e.g. redis+sentinel://host:26379/mymaster")
		}
		if q.Has("master_name") {
			return "", errors.New("sentinel form takes the master name from the path, not also from master_name")
		}
		q.Set("master_name", master)
		u.Path, u.RawPath = "", ""
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// parseFailoverURL reads a sentinel URL in go-redis' spelling and keeps what our form has
// always meant: the URL's user and password are the data nodes' (go-redis gives them to
// the sentinels), the sentinels are asked with the password alone, and every host's
// certificate is checked against that host's own name rather than the first sentinel's.
func parseFailoverURL(u string) (*redis.FailoverOptions, error) {
	opt, err := redis.ParseFailoverURL(u)
	if err != nil {
		return nil, err
	}
	// NewFailoverClient panics on these; they belong to a client of many replicas.
	if opt.RouteByLatency || opt.RouteRandomly {
		return nil, errors.New("route_by_latency and route_randomly do not apply to the sentinel form")
	}
	if opt.Username == "" && opt.Password == "" {
		opt.Username, opt.Password = opt.SentinelUsername, opt.SentinelPassword
	}
	opt.SentinelUsername = ""
	if opt.TLSConfig != nil {
		opt.TLSConfig.ServerName = ""
	}
	return opt, nil
}

// settle sets what every form shares: TLS 1.2 at least with the TLS files, the timeouts
// (dialing gets at least a second: a new connection costs more than a command), and RESP2
// unless the URL asks for a protocol: otpgate uses nothing of RESP3, and go-redis checks a
// RESP3 connection for push messages before every command, about 3 % of a refused send.
func (o redisOptions) settle(files redisTLSConfig, timeout time.Duration) {
	tc, dial, read, write, ctxTimeout, protocol := o.shared()
	if tc != nil {
		tc.MinVersion = max(tc.MinVersion, tls.VersionTLS12)
		files.apply(tc)
	}
	*dial, *read, *write = max(timeout, time.Second), timeout, timeout
	*ctxTimeout = true
	if *protocol == 0 {
		*protocol = 2
	}
}

// shared points at the fields settle sets in whichever form was parsed.
func (o redisOptions) shared() (tc *tls.Config, dial, read, write *time.Duration, ctxTimeout *bool, protocol *int) {
	switch {
	case o.cluster != nil:
		c := o.cluster
		return c.TLSConfig, &c.DialTimeout, &c.ReadTimeout, &c.WriteTimeout, &c.ContextTimeoutEnabled, &c.Protocol
	case o.failover != nil:
		f := o.failover
		return f.TLSConfig, &f.DialTimeout, &f.ReadTimeout, &f.WriteTimeout, &f.ContextTimeoutEnabled, &f.Protocol
	default:
		s := o.simple
		return s.TLSConfig, &s.DialTimeout, &s.ReadTimeout, &s.WriteTimeout, &s.ContextTimeoutEnabled, &s.Protocol
	}
}

// client builds the go-redis client of the parsed form.
func (o redisOptions) client() redis.UniversalClient {
	switch {
	case o.cluster != nil:
		return redis.NewClusterClient(o.cluster)
	case o.failover != nil:
		return redis.NewFailoverClient(o.failover)
	default:
		return redis.NewClient(o.simple)
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
