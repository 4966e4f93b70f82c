package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv/fixture"
)

// Where the backing services are when REDIS_URL and DATABASE_URL are not set.
const (
	localRedis    = "redis://127.0.0.1:6379/0"
	localPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
)

// env is what the scenarios run against.
type env struct {
	targets []string
	// admins are the admin listeners of the servers started, in targets' order.
	admins []string
	// provider is the built-in SMS provider; nil with -targets, where codes are unknown.
	provider *smstest.Provider
	// base offsets the phone numbers and client addresses of this run.
	base int64
	undo []func()
}

// tearDown undoes setUp, newest first.
func (e *env) tearDown() {
	for i := len(e.undo) - 1; i >= 0; i-- {
		e.undo[i]()
	}
}

// setUp starts the servers, or takes the -targets.
func setUp(ctx context.Context, o options, getenv func(string) string, stderr io.Writer) (*env, error) {
	e := &env{base: mathrand.Int64N(10_000_000)}
	if len(o.targets) > 0 {
		e.targets = o.targets
		return e, nil
	}
	ok := false
	defer func() {
		if !ok {
			e.tearDown()
		}
	}()
	bin := o.bin
	if bin == "" {
		var remove func()
		var err error
		if bin, remove, err = buildServer(ctx, stderr); err != nil {
			return nil, err
		}
		e.undo = append(e.undo, remove)
	}
	run := randomHex(4)
	dsn, drop, err := fixture.CreateDatabase(ctx, or(getenv("DATABASE_URL"), localPostgres), "otpgate_load_"+run)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	e.undo = append(e.undo, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := drop(ctx); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
		}
	})
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
	// It answers at once and skips the signatures, so the numbers measure otpgate.
	p, err := smstest.Start(smstest.Config{Secret: randomHex(16), SkipSignatures: true})
	if err != nil {
		return nil, err
	}
	e.provider = p
	e.undo = append(e.undo, p.Close)

	vars := map[string]string{
		"REDIS_URL": redisURL, "DATABASE_URL": dsn, "OTP_REDIS_PREFIX": prefix,
		"OTP_SECRET": randomHex(32), "ADMIN_TOKEN": randomHex(16),
		"SMS_PROVIDER": "webhook", "SMS_WEBHOOK_URL": p.URL, "SMS_WEBHOOK_SECRET": p.Secret,
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_LOG_LEVEL": "error",
		// The send scenarios never approve, from a few networks: the fraud guard would rightly
		// block them. The pumping scenario runs it on purpose.
		"OTP_FRAUD_GUARD": "off",
		// The check scenario guesses wrong within the budget for as long as it runs.
		"OTP_MAX_ATTEMPTS": "1000000", "OTP_LIMIT_CHECK_PHONE": "1000000/1h", "OTP_LIMIT_CHECK_IP": "1000000/1h",
	}
	for k, v := range o.extra {
		vars[k] = v
	}
	for i := range o.servers {
		var log strings.Builder // read only once the process has ended
		s, err := fixture.StartServer(ctx, bin, vars, &log)
		if err != nil {
			return nil, fmt.Errorf("server %d: %w\n%s", i+1, err, log.String())
		}
		e.targets, e.admins = append(e.targets, s.API), append(e.admins, s.Admin)
		e.undo = append(e.undo, func() {
			if err := s.Stop(20 * time.Second); err != nil {
				fmt.Fprintf(stderr, "loadgen: server %d: %v\n", i+1, err)
			}
		})
	}
	ok = true
	return e, nil
}

// buildServer builds the server binary into a temporary directory that remove deletes.
func buildServer(ctx context.Context, stderr io.Writer) (bin string, remove func(), err error) {
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
