package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// listeners are the public and the admin listener with their HTTP servers.
type listeners struct {
	public, admin net.Listener
	servers       []*http.Server
	// errc receives the error of a listener that failed while serving.
	errc chan error
	wg   sync.WaitGroup
}

// listen binds both addresses at once, so that a busy port is an error of the start
// rather than of a goroutine; nothing is served before serve.
func listen(cfg config, s *services) (*listeners, error) {
	publicLn, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("OTP_HTTP_ADDR=%s: %w", cfg.HTTPAddr, err)
	}
	adminLn, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		publicLn.Close()
		return nil, fmt.Errorf("OTP_ADMIN_ADDR=%s: %w", cfg.AdminAddr, err)
	}
	servers := []*http.Server{
		{Handler: s.public, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second},
		{Handler: s.admin, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second},
	}
	return &listeners{public: publicLn, admin: adminLn, servers: servers, errc: make(chan error, len(servers)+1)}, nil
}

// serve serves both listeners, each in a goroutine, until shutdown.
func (l *listeners) serve() {
	for i, ln := range []net.Listener{l.public, l.admin} {
		l.wg.Go(func() {
			if err := l.servers[i].Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				l.errc <- err
			}
		})
	}
}

// shutdown closes both listeners and waits for the requests they accepted to finish, until
// ctx ends; it returns what went wrong, already logged.
func (l *listeners) shutdown(ctx context.Context, log *slog.Logger) error {
	var errs error
	for _, s := range l.servers {
		if err := s.Shutdown(ctx); err != nil {
			log.Error("shutdown", "err", err)
			errs = errors.Join(errs, fmt.Errorf("shutdown: %w", err))
		}
	}
	l.wg.Wait()
	return errs
}
