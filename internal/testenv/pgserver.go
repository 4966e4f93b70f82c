package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// errNoPostgres marks a machine without the PostgreSQL server binaries.
var errNoPostgres = errors.New("initdb and postgres not found on PATH nor under /usr/lib/postgresql/*/bin")

// PostgresServer is a private throw-away PostgreSQL that a test may stop and start again.
type PostgresServer struct {
	// Addr is host:port; it stays the same across Stop and Start.
	Addr string

	tb   testing.TB
	dir  string
	port int
	bin  string
	cred *syscall.Credential

	proc   slot
	inited bool
}

// StartPostgres initialises and starts a private PostgreSQL (superuser postgres, trust
// authentication, no fsync: commits survive Stop but not a machine crash); it is stopped and
// removed at cleanup.
func StartPostgres(tb testing.TB) *PostgresServer {
	tb.Helper()
	NeedsService(tb, "a PostgreSQL server")
	s, err := newPostgresServer()
	if errors.Is(err, errNoPostgres) {
		unavailable(tb, "PostgreSQL server binaries", err, "postgresql")
	}
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	s.tb = tb
	stopAtCleanup(tb, s.remove)
	if err := s.start(); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	return s
}

// DSN returns the postgres:// URL of database dbname on this server.
func (s *PostgresServer) DSN(dbname string) string {
	return "postgres://postgres@" + s.Addr + "/" + dbname + "?sslmode=disable"
}

// Stop shuts the server down at once, as a crash would, and waits for it to exit.
func (s *PostgresServer) Stop() { s.stop() }

// Start starts a stopped server again on the same port and waits until it accepts connections.
func (s *PostgresServer) Start() {
	s.tb.Helper()
	if err := s.start(); err != nil {
		s.tb.Fatalf("testenv: %v", err)
	}
}

// NewPKI writes a PKI where this server may read it, for ssl_cert_file and ssl_key_file: in
// its own directory, owned by its user, since PostgreSQL wants its key owned by that user and
// a test's TempDir is private to the test's user.
func (s *PostgresServer) NewPKI() *PKI {
	s.tb.Helper()
	dir, err := os.MkdirTemp(s.dir, "tls-")
	if err != nil {
		s.tb.Fatalf("testenv: %v", err)
	}
	p := NewPKI(s.tb, dir)
	if s.cred != nil {
		for _, path := range []string{dir, p.CA, p.ServerCert, p.ServerKey} {
			if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
				s.tb.Fatalf("testenv: hand %s to the postgres user: %v", path, err)
			}
		}
	}
	return p
}

// newPostgresServer prepares a temporary directory the server's user owns; it is made under
// the system temp dir, because a test's TempDir is not reachable by another user.
func newPostgresServer() (*PostgresServer, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "otpgate-pg-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("chown temp dir: %w", err)
		}
	}
	return &PostgresServer{Addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, port: port, bin: bin, cred: cred}, nil
}

// start runs initdb the first time, then postgres, and waits until it accepts connections.
func (s *PostgresServer) start() error {
	s.proc.op.Lock()
	defer s.proc.op.Unlock()
	if s.proc.running() {
		return nil
	}
	data := filepath.Join(s.dir, "data")
	if !s.inited {
		args := []string{"-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"}
		logPath := filepath.Join(s.dir, "initdb.log")
		p, err := spawn(filepath.Join(s.bin, "initdb"), args, s.dir, logPath, s.cred)
		if err != nil {
			return err
		}
		if !s.proc.set(p) {
			return errClosed
		}
		<-p.done
		if p.waitErr != nil {
			return fmt.Errorf("initdb: %w\n%s", p.waitErr, logTail(logPath))
		}
		s.inited = true
	}
	args := []string{
		"-D", data, "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200",
	}
	p, err := spawn(filepath.Join(s.bin, "postgres"), args, s.dir, filepath.Join(s.dir, "postgres.log"), s.cred)
	if err != nil {
		return err
	}
	if !s.proc.set(p) {
		return errClosed
	}
	ready := func(ctx context.Context) error { return pingPostgres(ctx, s.DSN("postgres")) }
	if err := p.waitReady(30*time.Second, ready); err != nil {
		p.stop(syscall.SIGQUIT)
		return fmt.Errorf("postgres on %s: %w", s.Addr, err)
	}
	return nil
}

// stop asks for an immediate shutdown, which skips the checkpoint like a crash would.
func (s *PostgresServer) stop() { s.proc.stop(syscall.SIGQUIT) }

// remove stops the server for good and deletes its files.
func (s *PostgresServer) remove() {
	s.proc.close(syscall.SIGQUIT)
	os.RemoveAll(s.dir)
}

// postgresBin finds the directory holding initdb and postgres, newest version first.
func postgresBin() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { return pgMajor(found[i]) > pgMajor(found[j]) })
	for _, d := range append(dirs, found...) {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errNoPostgres
}

// pgMajor reads the major version from a .../postgresql/<major>/bin path.
func pgMajor(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// isFile reports whether path exists and is not a directory.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// postgresCredential returns the postgres user to switch to when running as root, since
// initdb and postgres refuse to run as root; otherwise nil.
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and no postgres user to run initdb as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("postgres user ids %s/%s: %w", u.Uid, strings.TrimSpace(u.Gid), err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
