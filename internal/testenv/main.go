package testenv

import (
	"errors"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"testing"
)

// shared holds what lives as long as the test binary: the shared servers and the stops of
// every throw-away server. It is the package's only mutable state, because TestMain and the
// tests have no other place to meet.
var shared struct {
	mu       sync.Mutex
	inMain   bool
	ending   bool
	nextID   int
	stops    map[int]func()
	stopOnce sync.Once

	redis    lazy
	postgres lazy
	server   lazy // the server binary
}

// lazy is a service found or started once per test binary.
type lazy struct {
	once sync.Once
	url  string
	err  error
}

// get resolves the service on first use and reports the same outcome afterwards.
func (l *lazy) get(find func() (string, error)) (string, error) {
	l.once.Do(func() { l.url, l.err = find() })
	return l.url, l.err
}

// Main runs the tests and then stops every throw-away server they started. An interrupt or
// termination signal stops them too, then ends the process with that signal; tests should
// therefore stop servers under test by cancelling a context, not by signalling the process.
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		stopAll()
		signal.Reset(syscall.SIGINT, syscall.SIGTERM)
		_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	}()

	code := m.Run()
	signal.Stop(sigs)
	close(sigs)
	stopAll()
	os.Exit(code)
}

// atExit registers the stop of a shared throw-away server; it refuses when Main is not in
// charge, since nothing would stop the server then.
func atExit(stop func()) error {
	shared.mu.Lock()
	inMain := shared.inMain
	shared.mu.Unlock()
	if !inMain {
		return errors.New("a throw-away server needs func TestMain(m *testing.M) { testenv.Main(m) } in this package")
	}
	_, err := onExit(stop)
	return err
}

// onExit registers stop to run when the test binary ends, and returns its removal; it
// refuses once the binary is stopping its servers, which an interrupt may start early.
func onExit(stop func()) (cancel func(), err error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.ending {
		return nil, errors.New("the test run is ending")
	}
	if shared.stops == nil {
		shared.stops = map[int]func(){}
	}
	id := shared.nextID
	shared.nextID++
	shared.stops[id] = stop
	return func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		delete(shared.stops, id)
	}, nil
}

// stopAtCleanup runs stop at the test's cleanup, or when the binary is interrupted before.
func stopAtCleanup(tb testing.TB, stop func()) {
	tb.Helper()
	cancel, err := onExit(stop)
	if err != nil {
		stop()
		tb.Fatalf("testenv: %v", err)
	}
	tb.Cleanup(func() {
		stop()
		cancel()
	})
}

// stopAll runs the registered stops, newest first; a second caller waits for the first.
func stopAll() {
	shared.stopOnce.Do(func() {
		shared.mu.Lock()
		shared.ending = true
		ids := make([]int, 0, len(shared.stops))
		for id := range shared.stops {
			ids = append(ids, id)
		}
		stops := shared.stops
		shared.stops = nil
		shared.mu.Unlock()
		slices.Sort(ids)
		for _, id := range slices.Backward(ids) {
			stops[id]()
		}
	})
}

// unavailable ends a test that cannot get a service: a failure under CI, a skip elsewhere.
func unavailable(tb testing.TB, what string, err error, pkg string) {
	tb.Helper()
	msg := "testenv: no " + what + ": " + err.Error() + " (install the Debian package " + pkg + ", or set its URL variable)"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// NeedsService skips the test when OTPGATE_TEST_OFFLINE=1 asks for the tests that need no
// service at all (`make quick`); what names the service, for the skip message. Every finder
// here calls it first, so a test that asks for Redis, PostgreSQL, a browser or the server
// binary is skipped before anything is looked for or started.
func NeedsService(tb testing.TB, what string) {
	tb.Helper()
	if os.Getenv("OTPGATE_TEST_OFFLINE") == "1" {
		tb.Skip("OTPGATE_TEST_OFFLINE=1: this test needs " + what)
	}
}
