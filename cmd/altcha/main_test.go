package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"otpgate/internal/challenge"
	"otpgate/internal/proof"
)

func TestRunSolvesAProblemsChallenge(t *testing.T) {
	c := challenge.New(challenge.Options{Secret: []byte("0123456789abcdef0123456789abcdef"), Complexity: 1000})
	b := proof.Binding{App: "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8d", Address: "+998901234567", ClientIP: "192.0.2.1"}
	now := time.Now()
	ch, err := c.Issue(1, b, now)
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := json.Marshal(map[string]any{
		"algorithm": ch.Algorithm, "challenge": ch.Challenge, "maxnumber": ch.MaxNumber, "salt": ch.Salt, "signature": ch.Signature})
	problem, _ := json.Marshal(map[string]any{"code": "challenge_required", "challenge": json.RawMessage(alone)})
	for name, in := range map[string][]byte{"Problem": problem, "ChallengeAlone": alone} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), nil, nil, bytes.NewReader(in), &out, nil); err != nil {
				t.Fatal(err)
			}
			got, err := c.Verify(context.Background(), proof.Solution{Altcha: strings.TrimSpace(out.String())}, b, now)
			if err != nil || got.Level != 1 {
				t.Errorf("got %+v %v, want the printed solution accepted", got, err)
			}
		})
	}
	if err := run(context.Background(), nil, nil, strings.NewReader(`{"code":"rate_limited"}`), &bytes.Buffer{}, nil); err == nil {
		t.Error("a problem without a challenge: got nil, want an error")
	}
}
