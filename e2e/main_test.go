// Package e2e proves otpgate holds up as a set of real server processes: exact admission
// across instances (standalone Redis and Redis Cluster), failing closed when Redis or
// Postgres goes away and recovering without a restart, no over-admission across a Redis
// failover (Sentinel and Cluster), bounded resources while the SMS
// provider hangs, a SIGTERM drain that drops no accepted request, and TLS to Redis and
// Postgres.
//
// The tests run the server binary of testenv.ServerBinary (a normal build, without -race:
// the race detector instruments the test process, which drives the load) as child
// processes configured only through their environment, as an operator would.
//
// `go test ./e2e` runs a short version sized for `make test`; OTPGATE_SOAK=1 (`make soak`)
// runs the long one. OTPGATE_E2E_SERVER=path tests that binary instead of building one.
package e2e

import (
	"os"
	"testing"

	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// soak reports whether the long version was asked for.
func soak() bool { return os.Getenv("OTPGATE_SOAK") == "1" }
