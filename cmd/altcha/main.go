// Command altcha solves an otpgate challenge from the command line, as ALTCHA's widget does
// in a browser: it reads a challenge (or a whole 428/403 problem that carries one) as JSON
// on standard input and prints the solution to send back as "altcha".
//
//	curl -s ... > answer.json
//	go run ./cmd/altcha < answer.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"otpgate/internal/challenge"
	"otpgate/internal/proof"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "altcha:", err)
		os.Exit(1)
	}
}

// body is a challenge as otpgate sends it, alone or inside a problem.
type body struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	MaxNumber int    `json:"maxnumber"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
}

// run reads the challenge from stdin and writes its solution to stdout.
func run(_ context.Context, _ []string, _ func(string) string, stdin io.Reader, stdout, _ io.Writer) error {
	raw, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return err
	}
	var problem struct {
		Challenge json.RawMessage `json:"challenge"`
	}
	if err := json.Unmarshal(raw, &problem); err != nil {
		return fmt.Errorf("standard input is not JSON: %w", err)
	}
	// A problem carries the challenge as an object; a challenge's own "challenge" is a string.
	if len(problem.Challenge) > 0 && problem.Challenge[0] == '{' {
		raw = problem.Challenge
	}
	var b body
	if err := json.Unmarshal(raw, &b); err != nil || b.Algorithm == "" || b.Salt == "" {
		return errors.New("no challenge found: give the 428 (or 403) answer, or its challenge object")
	}
	solution, ok := challenge.Solve(proof.Challenge{Algorithm: b.Algorithm, Challenge: b.Challenge, MaxNumber: b.MaxNumber, Salt: b.Salt, Signature: b.Signature})
	if !ok {
		return errors.New("no number up to maxnumber solves the challenge")
	}
	_, err = fmt.Fprintln(stdout, solution)
	return err
}
