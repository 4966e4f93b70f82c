package otp

import (
	"context"
	"errors"
)

// Send sends a fresh code for the phone: a new verification, or a resend of its pending one.
func (s *Service) Send(ctx context.Context, in SendInput) (SendResult, error) {
	return SendResult{}, errors.New("not implemented yet")
}
