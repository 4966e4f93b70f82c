// Package testenv gives integration tests real Redis and PostgreSQL servers, the tools to
// break them on purpose, and a large seeded history whose query plans a test can watch.
//
// Every package that uses it declares
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// so that throw-away servers started for the whole test binary are stopped, and the server
// binary it built is removed, when it ends.
//
// Shared servers are found in this order, lazily, the first time a test asks for one:
//   - REDIS_URL / DATABASE_URL, when set and answering;
//   - the standard local ports (Redis on 127.0.0.1:6379, PostgreSQL on 127.0.0.1:5432 as user
//     postgres with trust authentication), when they answer quickly;
//   - a throw-away redis-server / initdb+postgres on free ports in a temporary directory.
//
// Environment variables read here:
//   - REDIS_URL: redis://host:port/db of a Redis the tests may write to (under key prefixes).
//   - DATABASE_URL: postgres:// URL of a role allowed to CREATE and DROP databases; its
//     pgxpool pool_* parameters are ignored here.
//   - OTPGATE_E2E_SERVER: the server binary ServerBinary returns instead of building one.
//   - OTPGATE_TESTENV_NO_LOCAL=1: skip the standard local ports, to exercise the throw-away path.
//   - OTPGATE_TEST_OFFLINE=1: skip every test that asks for a service (`make quick`).
//   - CI=true: a service that cannot be found or started fails the test instead of skipping it.
//
// When running as root, initdb and postgres run as the postgres system user, which they require.
package testenv
