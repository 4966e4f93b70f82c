package httpkit

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"otpgate/internal/otp"
)

// healthResponse is the body of /healthz and /readyz.
type healthResponse struct {
	Status string `json:"status"`
}

// Healthz answers while the process serves at all; it checks nothing else, so an
// orchestrator does not restart servers because Redis blinked.
func Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = Encode(w, http.StatusOK, healthResponse{Status: "ok"})
	})
}

// Readyz answers 200 when ready (Redis and Postgres answer) within a short
// timeout, else a 503 problem, so a load balancer stops sending requests here.
func Readyz(log *slog.Logger, ready func(ctx context.Context) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
			err := ready(ctx)
			cancel()
			if err != nil {
				WriteProblem(w, r, log, fmt.Errorf("readyz: %w: %w", otp.ErrUnavailable, err))
				return
			}
		}
		_ = Encode(w, http.StatusOK, healthResponse{Status: "ok"})
	})
}

// ReadyTimeout bounds a readiness check.
const ReadyTimeout = 2 * time.Second
