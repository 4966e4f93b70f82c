package layering

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// imports is the allow-list of every package of the module: the packages of otpgate its
// non-test files may import, by path within the module. Adding a package, or a dependency
// between two, is a decision written here; TestImportsAreAllowed fails on anything else.
func imports() map[string][]string {
	return map[string][]string{
		// Data and generated clients: they know no other part of otpgate.
		"api":          {},
		"client":       {},
		"client/admin": {},
		"lua":          {},
		"migrations":   {},
		// The kernel's leaves import nothing of otpgate (TestKernelLeavesImportNothingOfOtpgate), and the kernel imports only them.
		"internal/contact":   {},
		"internal/proof":     {},
		"internal/psd2":      {},
		"internal/rate":      {},
		"internal/recent":    {},
		"internal/templates": {},
		"internal/text":      {},
		"internal/otp":       {"internal/contact", "internal/proof", "internal/psd2", "internal/rate", "internal/recent", "internal/templates", "internal/text"},
		// Small libraries of their own.
		"internal/idempotent": {},
		"internal/outbound":   {},
		"internal/pii":        {},
		"internal/seal":       {},
		"internal/signature":  {},
		"internal/retention":  {},
		"internal/web":        {},
		// Features: each owns its vocabulary and store contract and speaks the kernel's words.
		"internal/settings":  {"internal/history", "internal/otp"},
		"internal/history":   {"internal/contact", "internal/otp", "internal/pii", "internal/rate"},
		"internal/apps":      {"internal/contact", "internal/history", "internal/otp", "internal/pii", "internal/rate", "internal/seal", "internal/settings", "internal/templates"},
		"internal/operators": {"internal/history", "internal/otp"},
		"internal/sso":       {"internal/operators"},
		"internal/totp":      {"internal/otp", "internal/rate", "internal/seal", "internal/templates"},
		"internal/tokens":    {"internal/otp", "internal/seal"},
		"internal/receipt":   {"internal/otp"},
		"internal/tracing":   {"internal/otp", "internal/receipt"},
		"internal/events":    {"internal/apps", "internal/history", "internal/otp", "internal/outbound", "internal/rate", "internal/seal", "internal/signature", "internal/tracing"},
		"internal/fraud":     {"internal/contact", "internal/history", "internal/otp", "internal/pii", "internal/rate", "internal/settings"},
		"internal/spend":     {"internal/contact", "internal/events", "internal/history", "internal/otp", "internal/rate", "internal/settings"},
		"internal/challenge": {"internal/otp", "internal/proof", "internal/rate"},
		"internal/notify":    {"internal/otp"},
		// Delivery: the router, the senders, their registry and the message templates.
		"internal/delivery":  {"internal/otp"},
		"internal/message":   {"internal/otp", "internal/templates"},
		"internal/sms":       {"internal/otp", "internal/receipt", "internal/signature"},
		"internal/email":     {"internal/otp"},
		"internal/providers": {"internal/delivery", "internal/email", "internal/otp", "internal/outbound", "internal/receipt", "internal/sms", "internal/tracing"},
		// Drivers: the limiter and idempotency over Redis, the stores, the metrics decorators.
		"internal/ratelimit":   {"internal/otp", "internal/rate", "internal/tracing", "lua"},
		"internal/idempotency": {"internal/idempotent", "internal/otp", "lua"},
		"internal/persistence": {"internal/apps", "internal/events", "internal/fraud", "internal/history", "internal/operators", "internal/otp", "internal/receipt", "internal/spend", "internal/tokens", "internal/totp", "internal/tracing"},
		"internal/postgres":    {"internal/apps", "internal/events", "internal/fraud", "internal/history", "internal/operators", "internal/otp", "internal/persistence", "internal/pii", "internal/psd2", "internal/rate", "internal/receipt", "internal/retention", "internal/settings", "internal/spend", "internal/templates", "internal/tokens", "internal/totp", "internal/tracing", "migrations"},
		"internal/inmem":       {"internal/apps", "internal/events", "internal/fraud", "internal/history", "internal/operators", "internal/otp", "internal/persistence", "internal/rate", "internal/receipt", "internal/settings", "internal/spend", "internal/tokens", "internal/totp"},
		"internal/metrics":     {"internal/contact", "internal/delivery", "internal/otp", "internal/rate", "internal/receipt"},
		// Listeners: the kit they share, the public API, the admin listener, Twilio's API.
		"internal/httpkit":   {"internal/apps", "internal/contact", "internal/otp", "internal/proof", "internal/tracing"},
		"internal/http":      {"api", "internal/apps", "internal/contact", "internal/httpkit", "internal/idempotent", "internal/otp", "internal/proof", "internal/psd2", "internal/rate", "internal/receipt", "internal/tokens", "internal/totp"},
		"internal/admin":     {"api", "internal/apps", "internal/contact", "internal/events", "internal/fraud", "internal/history", "internal/httpkit", "internal/operators", "internal/otp", "internal/pii", "internal/rate", "internal/spend", "internal/templates", "internal/totp"},
		"internal/twilioapi": {"internal/apps", "internal/contact", "internal/history", "internal/httpkit", "internal/otp", "internal/psd2", "internal/rate", "internal/totp"},
		// Wiring and commands.
		"internal/server": {"internal/admin", "internal/apps", "internal/challenge", "internal/contact", "internal/delivery", "internal/events", "internal/fraud", "internal/history", "internal/http", "internal/idempotency", "internal/inmem", "internal/message", "internal/metrics", "internal/notify", "internal/operators", "internal/otp", "internal/outbound", "internal/persistence", "internal/pii", "internal/postgres", "internal/providers", "internal/rate", "internal/ratelimit", "internal/receipt", "internal/retention", "internal/spend", "internal/sso", "internal/templates", "internal/tokens", "internal/totp", "internal/tracing", "internal/twilioapi", "internal/web"},
		"cmd/server":      {"internal/server"},
		"cmd/altcha":      {"internal/challenge", "internal/proof"},
		"cmd/loadgen":     {"internal/loadtest", "internal/loadtest/pumping", "internal/loadtest/reference"},
		// Test support, which the binary never links (TestBinaryLinksNoTestSupport): the feature contracts, the real services, the harness, the load tools.
		"internal/storetest":               {"internal/apps", "internal/events", "internal/fraud", "internal/history", "internal/otp", "internal/psd2", "internal/receipt", "internal/storetest/fixture", "internal/templates"},
		"internal/storetest/stores":        {"internal/inmem", "internal/postgres", "internal/storetest/fixture", "internal/testenv"},
		"internal/storetest/fixture":       {"internal/events", "internal/fraud", "internal/history", "internal/otp", "internal/persistence", "internal/rate", "internal/retention"},
		"internal/apps/appstest":           {"internal/apps", "internal/otp", "internal/storetest/fixture", "internal/templates"},
		"internal/events/eventstest":       {"internal/apps", "internal/events", "internal/fraud", "internal/history", "internal/otp", "internal/signature", "internal/storetest/fixture"},
		"internal/fraud/fraudtest":         {"internal/events", "internal/fraud", "internal/history", "internal/otp", "internal/rate", "internal/storetest/fixture"},
		"internal/history/historytest":     {"internal/fraud", "internal/history", "internal/otp", "internal/rate", "internal/retention", "internal/storetest/fixture"},
		"internal/operators/operatorstest": {"internal/history", "internal/operators", "internal/otp", "internal/storetest/fixture"},
		"internal/retention/retentiontest": {"internal/fraud", "internal/history", "internal/otp", "internal/retention", "internal/storetest/fixture"},
		"internal/settings/settingstest":   {"internal/history", "internal/otp", "internal/settings", "internal/storetest/fixture"},
		"internal/spend/spendtest":         {"internal/events", "internal/history", "internal/otp", "internal/retention", "internal/spend", "internal/storetest/fixture"},
		"internal/tokens/tokenstest":       {"internal/tokens"},
		"internal/tracing/tracingtest":     {"internal/otp", "internal/receipt", "internal/storetest/fixture", "internal/tracing"},
		"internal/email/emailtest":         {"internal/testenv"},
		"internal/sms/smstest":             {"internal/sms"},
		"internal/apitest":                 {"api"},
		"internal/testenv":                 {"internal/pii", "internal/testenv/fixture"},
		"internal/testenv/browser":         {"internal/testenv"},
		"internal/testenv/fixture":         {},
		"internal/server/servertest":       {"internal/apitest", "internal/challenge", "internal/events", "internal/events/eventstest", "internal/pii", "internal/proof", "internal/server", "internal/sms", "internal/sms/smstest", "internal/testenv", "internal/testenv/fixture"},
		"internal/loadtest":                {"internal/loadtest/reference", "internal/sms/smstest", "internal/testenv/fixture"},
		"internal/loadtest/pumping":        {"internal/challenge", "internal/contact", "internal/loadtest", "internal/otp", "internal/proof", "internal/rate", "internal/spend"},
		"internal/loadtest/reference":      {"internal/fraud", "lua"},
		// Packages of tests only.
		"internal/layering":        {},
		"internal/web/browsertest": {},
		"e2e":                      {},
		"test/conformance":         {},
		"test/console":             {},
		"test/fuzz":                {},
		"test/inproc":              {},
	}
}

// TestImportsAreAllowed holds every package of the module to its entry of imports: a
// package without one, an entry of a package that is gone, and an import of otpgate that
// the entry does not name all fail.
func TestImportsAreAllowed(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "otpgate/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allow := imports()
	listed := map[string]bool{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		path, deps, _ := strings.Cut(strings.TrimSpace(line), ":")
		pkg := strings.TrimPrefix(path, "otpgate/")
		listed[pkg] = true
		entry, ok := allow[pkg]
		if !ok {
			t.Errorf("%s has no entry in imports(): write down what it may import", pkg)
			continue
		}
		for _, dep := range strings.Fields(deps) {
			if short, ours := strings.CutPrefix(dep, "otpgate/"); ours && !slices.Contains(entry, short) {
				t.Errorf("%s imports %s, which its entry in imports() does not allow", pkg, short)
			}
		}
	}
	if len(listed) < 50 {
		t.Fatalf("go list named %d packages; want the whole module", len(listed))
	}
	for _, pkg := range slices.Sorted(maps.Keys(allow)) {
		if !listed[pkg] {
			t.Errorf("imports() has an entry for %s, which is not a package of the module", pkg)
		}
	}
}
