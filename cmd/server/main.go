// Command server runs otpgate: the public verification API and the admin listener.
//
//	server [serve]   run the service (the default)
//	server migrate   apply database migrations and exit
//	server version   print the version and exit
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "otpgate:", err)
		os.Exit(1)
	}
}

// run is the whole program; tests call it with their own args, environment and output.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
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
		fmt.Fprintln(stdout, "otpgate", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, "usage: server [serve|migrate|version]  (configuration comes from the environment; see README)")
		return nil
	default:
		return fmt.Errorf("unknown command %q (want serve, migrate or version)", cmd)
	}
}
