package testenv_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/testenv"
)

func TestStartPostgres(t *testing.T) {
	ctx := context.Background()
	s := testenv.StartPostgres(t)
	dsn := s.DSN("postgres")
	c := connect(t, dsn)
	if _, err := c.Exec(ctx, "CREATE TABLE kept (id int)"); err != nil {
		t.Fatal(err)
	}

	t.Run("StoppedServerRefuses", func(t *testing.T) {
		s.Stop()
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(short, dsn); err == nil {
			conn.Close(ctx)
			t.Fatalf("got a connection to a stopped server, want an error")
		}
	})

	t.Run("StartedAgainKeepsCommittedData", func(t *testing.T) {
		s.Start()
		var n int
		if err := connect(t, dsn).QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n); err != nil {
			t.Fatalf("got %v, want the table created before the restart", err)
		}
	})
}

func TestThrowAwayServers(t *testing.T) {
	testenv.NeedsService(t, "redis-server and PostgreSQL")
	if os.Getenv("OTPGATE_TESTENV_NO_LOCAL") == "" {
		// Run this very test again in a child process that may not use the running
		// services, as on a machine where Redis and PostgreSQL are installed but stopped.
		cmd := exec.Command(os.Args[0], "-test.run", "^TestThrowAwayServers$", "-test.v")
		cmd.Env = append(withoutServiceURLs(os.Environ()), "OTPGATE_TESTENV_NO_LOCAL=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestThrowAwayServers/UsedWhenLocalPortsAreIgnored") {
			t.Fatalf("child run with the local services ignored: %v\n%s", err, out)
		}
		return
	}
	t.Run("UsedWhenLocalPortsAreIgnored", func(t *testing.T) {
		if u := testenv.RedisURL(t); strings.Contains(u, ":6379") {
			t.Errorf("got redis %s, want a throw-away server", u)
		}
		if dsn := testenv.PostgresDSN(t); strings.Contains(dsn, ":5432") {
			t.Errorf("got postgres %s, want a throw-away server", dsn)
		}
	})
}

// withoutServiceURLs drops REDIS_URL and DATABASE_URL from an environment.
func withoutServiceURLs(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "REDIS_URL=") && !strings.HasPrefix(kv, "DATABASE_URL=") {
			out = append(out, kv)
		}
	}
	return out
}
