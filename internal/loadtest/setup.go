package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	mathrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"otpgate/internal/loadtest/reference"
	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv/fixture"
)

// Where the backing services are when REDIS_URL and DATABASE_URL are not set.
const (
	localRedis    = "redis://127.0.0.1:6379/0"
	localPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
)

// System is one kind of server under load: otpgate, or loadgen's reference.
type System struct {
	name    string
	Targets []string
	// procs are the processes loadgen started; none with -targets.
	Procs []*fixture.Server
	// base offsets the client addresses of this system in this run.
	base int64
	// shape makes the numbers and clients of this system's sends.
	shape shape
	// adminToken opens the admin listener of otpgate processes loadgen started.
	AdminToken string
}

// guardOff names otpgate run with OTP_FRAUD_GUARD=off, for the guard's share.
const guardOff = "otpgate-guard-off"

// Env is what the scenarios run against.
type Env struct {
	// systems holds otpgate first, then the reference when asked for, then otpgate without
	// the guard when asked for.
	Systems []*System
	// provider is the built-in SMS provider; nil with -targets, where codes are unknown.
	Provider *smstest.Provider
	undo     []func()
}

// TearDown undoes SetUp, newest first.
func (e *Env) TearDown() {
	for i := len(e.undo) - 1; i >= 0; i-- {
		e.undo[i]()
	}
}

// SetUp starts the servers, or takes the -targets.
func SetUp(ctx context.Context, o Options, getenv func(string) string, stderr io.Writer) (*Env, error) {
	// The reference's numbers are half the number space away, so both systems' phones differ.
	base := mathrand.Int64N(10_000_000)
	otpgate := &System{name: "otpgate", base: base, shape: shape{third: 0, base: base}}
	e := &Env{Systems: []*System{otpgate}}
	if len(o.Targets) > 0 {
		otpgate.Targets = o.Targets
		return e, nil
	}
	ok := false
	defer func() {
		if !ok {
			e.TearDown()
		}
	}()
	bin := o.Bin
	if bin == "" {
		var remove func()
		var err error
		if bin, remove, err = BuildServer(ctx, stderr); err != nil {
			return nil, err
		}
		e.undo = append(e.undo, remove)
	}
	run := randomHex(4)
	dsn, err := e.database(ctx, or(getenv("DATABASE_URL"), localPostgres), "otpgate_load_"+run, stderr)
	if err != nil {
		return nil, err
	}
	redisURL := or(getenv("REDIS_URL"), localRedis)
	prefix := "otpgate-load:" + run + ":"
	e.undo = append(e.undo, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The keys of a cluster or sentinel Redis are left to expire with their windows.
		if err := fixture.DeleteKeys(ctx, redisURL, prefix); err != nil {
			fmt.Fprintf(stderr, "loadgen: cleaning up redis keys: %v\n", err)
		}
	})
	// It answers at once and skips the signatures, so the numbers measure the servers.
	p, err := smstest.Start(smstest.Config{Secret: randomHex(16), SkipSignatures: true})
	if err != nil {
		return nil, err
	}
	e.Provider = p
	e.undo = append(e.undo, p.Close)

	vars := serverEnv(redisURL, dsn, prefix, p)
	otpgate.AdminToken = vars["ADMIN_TOKEN"]
	maps.Copy(vars, o.ServerEnv)
	if err := e.start(ctx, otpgate, o.Servers, bin, vars, stderr); err != nil {
		return nil, err
	}
	if o.Reference {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		ref := &System{name: "reference", base: (base + 5_000_000) % 10_000_000, shape: shape{third: 1, base: base}}
		vars := map[string]string{
			reference.RoleVar: reference.Role,
			"REDIS_URL":       redisURL, "DATABASE_URL": dsn, "OTP_REDIS_PREFIX": prefix + "ref:",
			"OTP_SECRET": vars["OTP_SECRET"], "SMS_WEBHOOK_URL": p.URL,
		}
		if err := e.start(ctx, ref, o.Servers, self, vars, stderr); err != nil {
			return nil, err
		}
		e.Systems = append(e.Systems, ref)
	}
	if o.Reference && o.GuardShare {
		// otpgate without the guard, on a database of its own: the guard's settings live in
		// the database once a server has started on it.
		dsn, err := e.database(ctx, or(getenv("DATABASE_URL"), localPostgres), "otpgate_load_"+run+"_off", stderr)
		if err != nil {
			return nil, err
		}
		off := &System{name: guardOff, base: (base + 2_500_000) % 10_000_000, shape: shape{third: 2, base: base}}
		offVars := maps.Clone(vars)
		offVars["DATABASE_URL"], offVars["OTP_REDIS_PREFIX"], offVars["OTP_FRAUD_GUARD"] = dsn, prefix+"off:", "off"
		off.AdminToken = offVars["ADMIN_TOKEN"]
		if err := e.start(ctx, off, o.Servers, bin, offVars, stderr); err != nil {
			return nil, err
		}
		e.Systems = append(e.Systems, off)
	}
	ok = true
	return e, nil
}

// database creates a fresh database of the given name on the server of url and returns its
// DSN; tearing down drops it.
func (e *Env) database(ctx context.Context, url, name string, stderr io.Writer) (string, error) {
	dsn, drop, err := fixture.CreateDatabase(ctx, url, name)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	e.undo = append(e.undo, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := drop(ctx); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
		}
	})
	return dsn, nil
}

// serverEnv is otpgate's environment for a load run: the rules the reference runs with too.
func serverEnv(redisURL, dsn, prefix string, p *smstest.Provider) map[string]string {
	vars := map[string]string{
		"REDIS_URL": redisURL, "DATABASE_URL": dsn, "OTP_REDIS_PREFIX": prefix,
		"OTP_SECRET": randomHex(32), "ADMIN_TOKEN": randomHex(16),
		"SMS_PROVIDER": "webhook", "SMS_WEBHOOK_URL": p.URL, "SMS_WEBHOOK_SECRET": p.Secret,
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_LOG_LEVEL": "error",
		// The fake provider listens on loopback, which production refuses unless allow-listed.
		"OTP_OUTBOUND_ALLOW": "127.0.0.0/8,::1/128",
	}
	maps.Copy(vars, reference.PolicyEnv())
	return vars
}

// start runs n processes of bin for s, stopped at tear-down.
func (e *Env) start(ctx context.Context, s *System, n int, bin string, vars map[string]string, stderr io.Writer) error {
	for i := range n {
		var log strings.Builder // read only once the process has ended
		srv, err := fixture.StartServer(ctx, bin, vars, &log)
		if err != nil {
			return fmt.Errorf("%s server %d: %w\n%s", s.name, i+1, err, log.String())
		}
		s.Targets = append(s.Targets, srv.API)
		s.Procs = append(s.Procs, srv)
		e.undo = append(e.undo, func() {
			if err := srv.Stop(20 * time.Second); err != nil {
				fmt.Fprintf(stderr, "loadgen: %s server %d: %v\n", s.name, i+1, err)
			}
		})
	}
	return nil
}

// BuildServer builds the server binary into a temporary directory that remove deletes.
func BuildServer(ctx context.Context, stderr io.Writer) (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "otpgate-loadgen-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "otpgate")
	fmt.Fprintln(stderr, "loadgen: go build otpgate/cmd/server")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "otpgate/cmd/server").CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("go build otpgate/cmd/server (run loadgen inside the module, or pass -bin): %w\n%s", err, out)
	}
	return bin, remove, nil
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
