package loadtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// profileCPU starts fetching a CPU profile of d from the first process of s, after wait,
// into dir/<scenario>-<system>.pprof, and returns a function that waits for it and returns
// its error. Without dir, or for servers loadgen did not start, it does nothing.
func profileCPU(ctx context.Context, s *System, dir, scenario string, wait, d time.Duration) func() error {
	if dir == "" || len(s.Procs) == 0 {
		return func() error { return nil }
	}
	errc := make(chan error, 1)
	go func() {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			errc <- ctx.Err()
			return
		}
		errc <- fetchProfile(ctx, s.Procs[0].Admin, s.AdminToken, d, filepath.Join(dir, scenario+"-"+s.name+".pprof"))
	}()
	return func() error { return <-errc }
}

// fetchProfile GETs /debug/pprof/profile for d whole seconds (at least one) and writes it to path.
func fetchProfile(ctx context.Context, admin, token string, d time.Duration, path string) error {
	secs := max(int(d/time.Second), 1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, admin+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cpu profile: got status %d", resp.StatusCode)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile: %w", err)
	}
	return f.Close()
}
