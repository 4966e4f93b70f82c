package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"otpgate/internal/otp"
)

// storedAttempt is one provider attempt as sends.attempts keeps it (migrations/00006).
type storedAttempt struct {
	Provider   string    `json:"provider"`
	Outcome    string    `json:"outcome"`
	ProviderID string    `json:"provider_id,omitempty"`
	Error      string    `json:"error,omitempty"`
	Start      time.Time `json:"start"`
	DurationMS float64   `json:"duration_ms"`
}

// attemptsJSON encodes attempts for sends.attempts; none is an empty array.
func attemptsJSON(as []otp.ProviderAttempt) []byte {
	out := make([]storedAttempt, len(as))
	for i, a := range as {
		out[i] = storedAttempt{
			Provider: a.Provider, Outcome: string(a.Outcome), ProviderID: a.ProviderID, Error: a.Error,
			Start: a.Start.UTC().Truncate(time.Microsecond), DurationMS: float64(a.Duration.Microseconds()) / 1000,
		}
	}
	b, _ := json.Marshal(out) // strings, times and numbers always encode
	return b
}

// parseAttempts decodes sends.attempts.
func parseAttempts(b []byte) ([]otp.ProviderAttempt, error) {
	var in []storedAttempt
	if len(b) > 0 {
		if err := json.Unmarshal(b, &in); err != nil {
			return nil, fmt.Errorf("attempts: %w", err)
		}
	}
	out := make([]otp.ProviderAttempt, len(in))
	for i, a := range in {
		out[i] = otp.ProviderAttempt{
			Provider: a.Provider, Outcome: otp.ProviderOutcome(a.Outcome), ProviderID: a.ProviderID, Error: a.Error,
			Start: a.Start.UTC(), Duration: time.Duration(a.DurationMS * float64(time.Millisecond)),
		}
	}
	return out, nil
}
