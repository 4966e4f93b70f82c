package otp

import (
	"context"
	"errors"
)

// Check proves a code against a verification and closes it when it matches.
func (s *Service) Check(ctx context.Context, in CheckInput) (CheckResult, error) {
	return CheckResult{}, errors.New("not implemented yet")
}
