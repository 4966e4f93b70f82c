package smstest

import (
	"context"
	"time"
)

// wait delays or holds a fake vendor's reply as told until the request's ctx ends or the
// fake closes (release); false means nothing more is to be written.
func wait(ctx context.Context, release <-chan struct{}, reply Reply) bool {
	if reply.Hang {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return false
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-ctx.Done():
			return false
		case <-release:
			return false
		}
	}
	return true
}
