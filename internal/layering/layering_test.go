// Package layering holds the tests that keep otpgate's dependencies pointing inward: the
// domain (internal/otp) knows no driver and no other part of otpgate but the leaf packages
// of kernelLeaves, the HTTP layers (internal/http, internal/admin) reach Redis and Postgres
// only through the services and interfaces the domain declares, and the server binary links
// no test support.
package layering

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// kernelLeaves are the only packages of otpgate the verification kernel (internal/otp) may
// import: each holds words the kernel shares with the features around it and imports
// nothing of otpgate itself (TestKernelLeavesImportNothingOfOtpgate), so that the kernel
// stays the centre of the graph. A package that may know otp may know them too.
var kernelLeaves = []string{
	"otpgate/internal/contact",
	"otpgate/internal/proof",
	"otpgate/internal/psd2",
	"otpgate/internal/rate",
	"otpgate/internal/recent",
	"otpgate/internal/templates",
	"otpgate/internal/text",
}

// forbidden lists, per package, the import paths (prefixes) that may not appear anywhere in
// its dependency graph.
func forbidden() map[string][]string {
	drivers := []string{"github.com/redis/go-redis", "github.com/jackc/pgx", "github.com/alicebob/miniredis"}
	return map[string][]string{
		"otpgate/internal/otp": append(drivers,
			"github.com/go-chi/chi", "github.com/prometheus", "otpgate/internal/", "net/http"),
		// The public API and the kit the listeners share know neither the admin listener
		// nor the features only the admin manages. They know apps (which owns the app
		// directory and keys they authenticate with), whose own rule keeps it off drivers.
		"otpgate/internal/http": append(drivers,
			"otpgate/internal/idempotency", "otpgate/internal/ratelimit", "otpgate/internal/postgres",
			"otpgate/internal/inmem", "otpgate/internal/metrics", "otpgate/internal/sms",
			"otpgate/internal/twilioapi", "otpgate/internal/notify",
			"otpgate/internal/admin", "otpgate/internal/fraud", "otpgate/internal/events", "otpgate/internal/spend"),
		// The admin listener reaches history, limits, apps, webhooks and the fraud guard
		// through their services only, never a store or a driver; of HTTP it shares the kit,
		// not the public API.
		"otpgate/internal/admin": append(drivers,
			"otpgate/internal/postgres", "otpgate/internal/inmem", "otpgate/internal/ratelimit",
			"otpgate/internal/idempotency", "otpgate/internal/sms", "otpgate/internal/notify",
			"otpgate/internal/http"),
		// The HTTP kit serves the public API, the admin listener and the Twilio adapter and
		// knows none of them, nor the features only they reach.
		"otpgate/internal/httpkit": append(drivers,
			"otpgate/internal/http", "otpgate/internal/admin", "otpgate/internal/twilioapi",
			"otpgate/internal/idempotency", "otpgate/internal/ratelimit", "otpgate/internal/postgres",
			"otpgate/internal/inmem", "otpgate/internal/metrics", "otpgate/internal/sms",
			"otpgate/internal/notify", "otpgate/internal/fraud", "otpgate/internal/events", "otpgate/internal/spend"),
		// The fraud guard's domain knows otp and nothing of how it is stored, served or counted.
		"otpgate/internal/fraud": append(drivers,
			"github.com/go-chi/chi", "github.com/prometheus", "net/http", "otpgate/internal/http",
			"otpgate/internal/ratelimit", "otpgate/internal/postgres", "otpgate/internal/inmem",
			"otpgate/internal/metrics", "otpgate/internal/sms", "otpgate/internal/idempotency", "otpgate/internal/notify"),
		// The spend step prices and budgets sends; it knows otp, history's audit entry and the
		// events' payload (whose package holds the dispatcher, hence net/http), nothing of how
		// it is stored, served or counted.
		"otpgate/internal/spend": append(drivers,
			"github.com/go-chi/chi", "github.com/prometheus", "otpgate/internal/http",
			"otpgate/internal/ratelimit", "otpgate/internal/postgres", "otpgate/internal/inmem",
			"otpgate/internal/metrics", "otpgate/internal/sms", "otpgate/internal/idempotency", "otpgate/internal/notify",
			"otpgate/internal/fraud", "otpgate/internal/admin"),
		// The Idempotency-Key contract is shared by the API and the Redis store; it knows neither.
		"otpgate/internal/idempotent": append(drivers, "github.com/go-chi/chi", "net/http", "otpgate/internal/"),
		"otpgate/internal/notify":     {"github.com/jackc/pgx", "otpgate/internal/http", "otpgate/internal/postgres"},
		"otpgate/internal/ratelimit":  {"github.com/jackc/pgx", "otpgate/internal/http", "otpgate/internal/postgres"},
		"otpgate/internal/postgres":   {"github.com/redis/go-redis", "otpgate/internal/http", "otpgate/internal/ratelimit"},
		"otpgate/internal/sms":        {"github.com/redis/go-redis", "github.com/jackc/pgx", "otpgate/internal/http"},
		// The OpenAPI documents are data, and the generated clients must work outside this
		// module: neither knows any other part of otpgate.
		"otpgate/api":          append(drivers, "otpgate/internal/", "net/http"),
		"otpgate/client":       append(drivers, "otpgate/internal/", "otpgate/api"),
		"otpgate/client/admin": append(drivers, "otpgate/internal/", "otpgate/api"),
		// The router knows senders only as otp.Sender, and providers by name and channels,
		// never by kind; the renderer is pure text.
		"otpgate/internal/delivery": append(drivers, "net/http", "otpgate/internal/sms", "otpgate/internal/email", "otpgate/internal/http",
			"otpgate/internal/providers"),
		// The registry of provider kinds builds senders from settings; where they are
		// served, stored or counted is the wiring's business.
		"otpgate/internal/providers": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "otpgate/internal/http",
			"otpgate/internal/metrics", "otpgate/internal/postgres", "otpgate/internal/inmem", "otpgate/internal/ratelimit"),
		"otpgate/internal/message": append(drivers, "net/http", "otpgate/internal/sms", "otpgate/internal/delivery", "otpgate/internal/http"),
		"otpgate/internal/email":   append(drivers, "net/http", "otpgate/internal/sms", "otpgate/internal/http"),
		// The Twilio adapter reaches everything through the domain's services, as internal/http does.
		"otpgate/internal/twilioapi": append(drivers, "otpgate/internal/http", "otpgate/internal/idempotency",
			"otpgate/internal/ratelimit", "otpgate/internal/postgres", "otpgate/internal/inmem", "otpgate/internal/metrics", "otpgate/internal/sms"),
		// The lifecycle job knows its stores only as retention.Store, and nothing of otpgate.
		"otpgate/internal/retention": append(drivers, "github.com/prometheus", "net/http", "otpgate/internal/"),
		// apps owns the app directory and keys the listeners use, and manages configuration
		// through its own Store interface only; history owns the record of sends and checks.
		// Both speak the domain's vocabulary and know nothing else of otpgate (see allowed).
		"otpgate/internal/apps":    append(drivers, "github.com/go-chi/chi", "net/http", "otpgate/internal/"),
		"otpgate/internal/history": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "net/http", "otpgate/internal/"),
		// Live settings are one generic mechanism: it knows the notices only as an interface,
		// and of otpgate only the text rules and the audit entry (see allowed).
		"otpgate/internal/settings": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "net/http", "otpgate/internal/"),
		// TOTP owns its entities, factors and challenges and the Store they are kept in; it
		// speaks the domain's vocabulary and knows nothing else of otpgate (see allowed).
		"otpgate/internal/totp": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "net/http", "otpgate/internal/"),
		// operators owns accounts, roles and tokens; it audits in history's log and
		// knows nothing of how it is stored or served.
		"otpgate/internal/operators": append(drivers, "github.com/go-chi/chi", "net/http", "otpgate/internal/"),
		// The single sign-on client speaks OpenID Connect and returns identities; accounts,
		// sessions and routes are others' business.
		"otpgate/internal/sso": append(drivers, "github.com/go-chi/chi", "otpgate/internal/http", "otpgate/internal/admin",
			"otpgate/internal/postgres", "otpgate/internal/inmem"),
		// The outbound address policy is a small library that the events and the providers use.
		"otpgate/internal/outbound": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "otpgate/internal/"),
		// Verification tokens own their keys, redemptions and the Store they are kept in;
		// they speak the domain's vocabulary and seal with seal, nothing else of otpgate.
		"otpgate/internal/tokens": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "net/http", "otpgate/internal/"),
		// Sealing at rest is a small library of its own: it knows nothing of otpgate.
		"otpgate/internal/seal": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "net/http", "otpgate/internal/"),
		// Sealing and indexing personal data is a small library too: stores and the limiter use it.
		// The browser code's server embeds files and knows nothing else of otpgate.
		"otpgate/internal/web": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "otpgate/internal/"),
		"otpgate/internal/pii": append(drivers, "github.com/go-chi/chi", "github.com/prometheus", "net/http", "otpgate/internal/"),
	}
}

// allowed lists, per package, the dependencies that a rule of forbidden catches but that
// the package may have: a feature that owns its types imports the domain, and apps audits
// its changes in history's log. Dependencies point inward: otp imports neither.
func allowed() map[string][]string {
	m := map[string][]string{
		"otpgate/internal/otp":       nil,
		"otpgate/internal/apps":      {"otpgate/internal/otp", "otpgate/internal/history", "otpgate/internal/seal", "otpgate/internal/pii", "otpgate/internal/settings"},
		"otpgate/internal/settings":  {"otpgate/internal/otp", "otpgate/internal/history", "otpgate/internal/pii"},
		"otpgate/internal/history":   {"otpgate/internal/otp", "otpgate/internal/pii"},
		"otpgate/internal/totp":      {"otpgate/internal/otp", "otpgate/internal/seal"},
		"otpgate/internal/tokens":    {"otpgate/internal/otp", "otpgate/internal/seal"},
		"otpgate/internal/operators": {"otpgate/internal/otp", "otpgate/internal/history", "otpgate/internal/pii"},
	}
	for pkg, deps := range m {
		if pkg == "otpgate/internal/otp" || slices.Contains(deps, "otpgate/internal/otp") {
			m[pkg] = append(deps, kernelLeaves...)
		}
	}
	return m
}

// TestKernelLeavesImportNothingOfOtpgate holds the kernel's leaves to their rule: they
// depend on no package of otpgate, so the kernel that imports them depends on none either.
func TestKernelLeavesImportNothingOfOtpgate(t *testing.T) {
	for _, leaf := range kernelLeaves {
		t.Run(strings.TrimPrefix(leaf, "otpgate/"), func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", leaf).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", leaf, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep != leaf && strings.HasPrefix(dep, "otpgate/") {
					t.Errorf("%s depends on %s; a leaf of the kernel depends on nothing of otpgate", leaf, dep)
				}
			}
		})
	}
}

// under reports whether pkg is path or below it, by whole path elements (internal/http
// is not under internal/httpkit's rule); a path ending in "/" takes everything below it.
func under(pkg, path string) bool {
	if strings.HasSuffix(path, "/") {
		return strings.HasPrefix(pkg, path)
	}
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}

func TestDependenciesPointInward(t *testing.T) {
	for pkg, bans := range forbidden() {
		t.Run(strings.TrimPrefix(pkg, "otpgate/"), func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", pkg, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 2 {
				t.Fatalf("go list -deps %s listed %d packages; want the package and its dependencies", pkg, len(deps))
			}
			for _, dep := range deps {
				if dep == pkg || slices.Contains(allowed()[pkg], dep) {
					continue
				}
				for _, ban := range bans {
					if under(dep, ban) {
						t.Errorf("%s depends on %s, which it must not (rule %q)", pkg, dep, ban)
					}
				}
			}
		})
	}
}

// testSupport reports whether pkg exists for tests only: the test environment, the test
// rooms, the load tools and every package named like a test helper (servertest, storetest,
// apitest, smstest, ...).
func testSupport(pkg string) bool {
	for _, root := range []string{"otpgate/internal/testenv", "otpgate/internal/loadtest", "otpgate/test", "otpgate/e2e"} {
		if under(pkg, root) {
			return true
		}
	}
	last := pkg[strings.LastIndex(pkg, "/")+1:]
	return strings.HasPrefix(pkg, "otpgate/") && strings.HasSuffix(last, "test")
}

// TestBinaryLinksNoTestSupport keeps the test helpers, fakes and load tools out of the
// server binary: they may be imported by tests and by cmd/loadgen only.
func TestBinaryLinksNoTestSupport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "otpgate/cmd/server").Output()
	if err != nil {
		t.Fatalf("go list -deps otpgate/cmd/server: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "otpgate/internal/server") {
		t.Fatalf("go list -deps otpgate/cmd/server listed %d packages without internal/server", len(deps))
	}
	for _, dep := range deps {
		if testSupport(dep) {
			t.Errorf("cmd/server links %s, which is test support", dep)
		}
	}
	// The rule must know the test support it is about, or it proves nothing.
	for _, pkg := range []string{"otpgate/internal/testenv/fixture", "otpgate/internal/storetest",
		"otpgate/internal/server/servertest", "otpgate/internal/apitest", "otpgate/internal/sms/smstest",
		"otpgate/internal/loadtest/pumping", "otpgate/test/inproc"} {
		if !testSupport(pkg) {
			t.Errorf("testSupport(%q) is false; want it caught", pkg)
		}
	}
}
