// Package server is otpgate's wiring: it reads the configuration from the environment,
// builds the stores, services and listeners, runs the background loops and drains on
// shutdown. cmd/server is a thin main over Run, and the in-process tests start the
// service through Run just as the binary does.
package server

import (
	"context"
	"fmt"
	"io"
)

// Version is set at build time with -ldflags "-X otpgate/internal/server.Version=...".
var Version = "dev"

// Run is the whole program; tests call it with their own args, environment and output.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 1 {
		cmd = args[1]
	}
	switch cmd {
	case "serve":
		return serve(ctx, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, getenv, stdout)
	case "version":
		fmt.Fprintln(stdout, "otpgate", Version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, "usage: server [serve|migrate|version]  (configuration comes from the environment; see README)")
		return nil
	default:
		return fmt.Errorf("unknown command %q (want serve, migrate or version)", cmd)
	}
}
