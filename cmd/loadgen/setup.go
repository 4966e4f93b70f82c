package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// Where the backing services are when REDIS_URL and DATABASE_URL are not set.
const (
	localRedis    = "redis://127.0.0.1:6379/0"
	localPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
)

// env is what the scenarios run against.
type env struct {
	targets []string
	// provider is the built-in SMS provider; nil with -targets, where codes are unknown.
	provider *provider
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
		dir, err := os.MkdirTemp("", "otpgate-loadgen-")
		if err != nil {
			return nil, err
		}
		e.undo = append(e.undo, func() { os.RemoveAll(dir) })
		bin = filepath.Join(dir, "otpgate")
		fmt.Fprintln(stderr, "loadgen: go build otpgate/cmd/server")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "otpgate/cmd/server").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build otpgate/cmd/server (run loadgen inside the module, or pass -bin): %w\n%s", err, out)
		}
	}
	run := randomHex(4)
	dsn, err := freshDatabase(ctx, or(getenv("DATABASE_URL"), localPostgres), "otpgate_load_"+run, e)
	if err != nil {
		return nil, err
	}
	redisURL := or(getenv("REDIS_URL"), localRedis)
	prefix := "otpgate-load:" + run + ":"
	e.undo = append(e.undo, func() { deleteKeys(redisURL, prefix, stderr) })
	p, err := startProvider()
	if err != nil {
		return nil, err
	}
	e.provider = p
	e.undo = append(e.undo, p.close)

	vars := map[string]string{
		"REDIS_URL": redisURL, "DATABASE_URL": dsn, "OTP_REDIS_PREFIX": prefix,
		"OTP_SECRET": randomHex(32), "ADMIN_TOKEN": randomHex(16),
		"SMS_PROVIDER": "webhook", "SMS_WEBHOOK_URL": p.url, "SMS_WEBHOOK_SECRET": p.secret,
		"OTP_HTTP_ADDR": "127.0.0.1:0", "OTP_ADMIN_ADDR": "127.0.0.1:0",
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_LOG_LEVEL": "error",
		// The check scenario guesses wrong within the budget for as long as it runs.
		"OTP_MAX_ATTEMPTS": "1000000", "OTP_LIMIT_CHECK_PHONE": "1000000/1h", "OTP_LIMIT_CHECK_IP": "1000000/1h",
	}
	for i := range o.servers {
		// The first one applies the migrations alone.
		url, stop, err := startServer(ctx, bin, vars, i > 0)
		if err != nil {
			return nil, fmt.Errorf("server %d: %w", i+1, err)
		}
		e.targets = append(e.targets, url)
		e.undo = append(e.undo, stop)
	}
	ok = true
	return e, nil
}

var listeningRe = regexp.MustCompile(`listening: api (http://\S+) admin`)

// startServer runs one server process and waits until it listens; stop ends it with
// SIGTERM.
func startServer(ctx context.Context, bin string, vars map[string]string, skipMigrate bool) (string, func(), error) {
	cmd := exec.Command(bin)
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if skipMigrate {
		cmd.Env = append(cmd.Env, "OTP_MIGRATE=false")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	done := make(chan struct{})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	select {
	case u := <-urlc:
		return u, stop, nil
	case <-done:
		return "", nil, fmt.Errorf("exited before listening: %s", stderr.String())
	case <-ctx.Done():
		stop()
		return "", nil, ctx.Err()
	case <-time.After(60 * time.Second):
		stop()
		return "", nil, errors.New("did not listen within 60s")
	}
}

// freshDatabase creates database name through the admin URL and drops it at tear-down. The
// servers get the admin URL's settings, pgxpool's pool_* ones included (such as
// pool_max_conns, to compare pool sizes).
func freshDatabase(ctx context.Context, adminURL, name string, e *env) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	admin := *u
	q := admin.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k) // a single connection does not know them
		}
	}
	admin.RawQuery = q.Encode()
	do := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			return fmt.Errorf("DATABASE_URL: %w", err)
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := do(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	e.undo = append(e.undo, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = do(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u.Path = "/" + name
	return u.String(), nil
}

// deleteKeys removes what the run left under prefix in a standalone Redis; the keys of
// other forms expire with their longest window.
func deleteKeys(redisURL, prefix string, stderr io.Writer) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			rdb.Unlink(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		rdb.Unlink(ctx, batch...)
	}
	if err := iter.Err(); err != nil {
		fmt.Fprintf(stderr, "loadgen: cleaning up redis keys: %v\n", err)
	}
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
