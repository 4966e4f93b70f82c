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

	"otpgate/internal/server"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "otpgate:", err)
		os.Exit(1)
	}
}

// run is the whole program, which internal/server holds; tests call it with their own
// args, environment and output.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return server.Run(ctx, args, getenv, stdout, stderr)
}
