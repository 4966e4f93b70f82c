package admin

import (
	"net/http"
	"net/http/pprof"
)

// handlePprof serves the Go runtime's profiles under /debug/pprof/ (the index, the named
// profiles such as heap and goroutine, a CPU profile, an execution trace and symbol
// lookups), so a server under load can be profiled where it runs. It only ever sits behind
// requireAdmin: profiles show code paths and timings, never request data, but a CPU profile
// or a trace costs the server while it runs.
func handlePprof() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
