package fraud

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/rate"
)

// Guard is the fraud step of sends and checks (otp.Fraud) over the reloader's snapshots.
type Guard struct {
	snapshots *Reloader
	counter   Counter
	store     Store
	log       *slog.Logger

	// NewID makes block ids; tests replace it.
	NewID func() string
}

var _ otp.Fraud = (*Guard)(nil)

// NewGuard returns the fraud step over the running snapshots, the limiter's counter and the store.
func NewGuard(snapshots *Reloader, counter Counter, store Store, log *slog.Logger) *Guard {
	return &Guard{snapshots: snapshots, counter: counter, store: store, log: log,
		NewID: func() string { return uuid.Must(uuid.NewV7()).String() }}
}

// Screen implements otp.Fraud with the running snapshot.
func (g *Guard) Screen(t otp.FraudTarget) otp.Screening { return g.snapshots.Snapshot().Screen(t) }

// Approved implements otp.Fraud: one approval for each guarded target of the send, weighed
// by ApprovalWeight.
func (g *Guard) Approved(ctx context.Context, t otp.FraudTarget, a otp.Approval) error {
	snap := g.snapshots.Snapshot()
	targets := snap.GuardTargets(t)
	if len(targets) == 0 {
		return nil
	}
	return g.counter.Approve(ctx, targets, snap.Config.ApprovalWeight(t, a))
}

// TrippedBy is how a block's reason names the send that tripped it, up to the client's
// address: "tripped by a send to <number> from ". The guard writes the number masked;
// versions before wrote it whole, which an erasure of that number rewrites.
func TrippedBy(number string) string { return "tripped by a send to " + number + " from " }

// ApprovalWeight is what an approval weighs for the guard: FastApprovalWeight when it came
// faster after its send than a person reads a message (MinApprovalDelay), times
// ForeignApprovalWeight when it came from another network than the send's.
func (c Config) ApprovalWeight(t otp.FraudTarget, a otp.Approval) float64 {
	w := 1.0
	if a.At.Sub(a.SentAt) < time.Duration(c.MinApprovalDelay) {
		w *= c.FastApprovalWeight
	}
	if a.ClientIP != "" && Network(a.ClientIP) != Network(t.ClientIP) {
		w *= c.ForeignApprovalWeight
	}
	return w
}

// BlockStarted implements otp.Fraud: the block's row, with why it started and a reason
// naming the figures, and its audit entry. The reason names the tripping send's number
// masked (pii.Mask): the block, its audit entry and its events outlive the person's
// history and are shown to every role.
func (g *Guard) BlockStarted(ctx context.Context, t otp.FraudTarget, gs rate.GuardState, why rate.FraudExplanation, at time.Time) error {
	b := Block{
		ID: g.NewID(), Scope: gs.Scope, Target: gs.Key, Mode: ModeEnforce,
		Reason:    why.Summary() + "; " + TrippedBy(pii.Mask(t.Phone)) + t.ClientIP,
		Why:       &why,
		StartedAt: at, EndsAt: at.Add(gs.RetryAfter),
	}
	if gs.Shadow {
		b.Mode = ModeShadow
	}
	a := history.AdminAction{
		Action: ActionBlockStarted, Target: b.Scope + ":" + b.Target, Time: at,
		Detail: fmt.Sprintf("%s block until %s: %s", b.Mode, b.EndsAt.UTC().Format(time.RFC3339), b.Reason),
	}
	if err := g.store.RecordFraudBlock(ctx, b, a); err != nil {
		return fmt.Errorf("fraud: record block: %w", err)
	}
	g.snapshots.countBlocks(ctx)
	return nil
}
