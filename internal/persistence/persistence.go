// Package persistence names the one store a server runs on: the composite of the small
// store interfaces that each feature declares in its own store.go. internal/postgres and
// internal/inmem implement it, internal/server wires it once and hands each feature its part,
// and internal/storetest runs every feature's contract over it. A persisted feature adds
// its interface here and nothing else; what only some stores can do (retention, settling
// sends a stopped server left open) stays outside, behind storetest's capabilities.
package persistence

import (
	"context"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/spend"
	"otpgate/internal/tokens"
	"otpgate/internal/totp"
	"otpgate/internal/tracing"
)

// Store is every feature's store in one value.
type Store interface {
	otp.Store
	receipt.Store
	tracing.TraceStore
	history.Store
	history.EraseStore
	apps.Store
	apps.RateLimitStore
	fraud.Store
	events.Store
	spend.Store
	totp.Store
	tokens.Store
	operators.Store
	// Ping tells readiness whether the store answers.
	Ping(ctx context.Context) error
}
