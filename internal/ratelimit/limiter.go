// Package ratelimit is otpgate's limiter: policies of several keys, each with several
// sliding-window rules, decided atomically inside Redis by one Lua script over sorted sets.
package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/tracing"
	"otpgate/lua"
)

// client is the part of go-redis the limiter uses.
type client interface {
	redis.Scripter
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

// Limiter implements otp.Limiter on Redis: standalone, Sentinel or Cluster.
//
// Time is the Redis server's clock (TIME, in microseconds), read inside the script, so the
// clocks of the app servers never matter. Tests that need exact time set Clock: the limiter
// then passes Clock's time to the script, which uses it instead of TIME. Nothing else
// changes, so the deterministic tests run the very code that production runs.
type Limiter struct {
	rdb    client
	prefix string
	script *redis.Script
	// guard is lua/guard.lua: approvals and lifted blocks.
	guard *redis.Script
	// group splits a policy's keys into the sets that one script call may touch together.
	group func(keys []string) [][]int
	// wait, when not nil, makes allowing decisions wait for replicas (WaitReplicas).
	wait *waiter
	// single is true when every key of a policy is decided in one call (standalone or
	// Sentinel), which the young countries' pool needs.
	single bool
	// tracer makes a span of every script call (Tracing).
	tracer trace.Tracer

	// Clock, when set, replaces the Redis server clock; it is for tests and nil otherwise.
	Clock func() time.Time
	// NewID makes the request id a decision is recorded under; tests replace it.
	NewID func() string
}

// New returns a limiter storing its keys under prefix. A *redis.ClusterClient gets one
// script call per hash slot (see Allow); a *redis.Ring one per key, since it shards by key;
// every other client, standalone or Sentinel, one call per decision; opts may add
// WaitReplicas. Calls are bounded by
// their context's deadline and the client's timeouts; without a deadline, the client's
// retries against a Redis that is down take over a second to give up.
func New(rdb redis.UniversalClient, prefix string, opts ...Option) *Limiter {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	l := &Limiter{rdb: rdb, prefix: prefix, script: redis.NewScript(lua.SlidingLog), guard: redis.NewScript(lua.Guard), NewID: newID, group: together, wait: newWaiter(rdb, o), single: true,
		tracer: tracing.Tracer(o.tracer)}
	switch rdb.(type) {
	case *redis.ClusterClient:
		l.group, l.single = bySlot, false
	case *redis.Ring:
		l.group, l.single = apart, false
	}
	return l
}

// newID returns 8 random bytes in base64url: 11 characters, unique enough among the
// entries one key holds.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Key returns the Redis key of one scope and key. Its hash tag is the whole scope and key,
// so that Redis Cluster spreads keys over slots and a key's slot never depends on the prefix.
func (l *Limiter) Key(scope, key string) string {
	return l.prefix + "{" + scope + ":" + key + "}"
}

// Allow decides the request against every limit and records it in all of them, or in none
// when any rule or guard refuses it. A limit without rules or guard limits nothing and is
// not recorded. A guard is decided in the same call as the rules of its slot: a blocked key
// refuses, and a key whose unapproved sends trip it is blocked by this very decision (see
// lua/sliding_log.lua); shadow rules and shadow guards report what they would have refused
// and refuse nothing.
//
// On standalone Redis the decision is one script call. On a cluster, keys in different hash
// slots cannot meet in one script, so each slot is decided in turn, in ascending order; when
// a slot refuses, the slots already recorded are undone and the remaining ones only report,
// so the decision still names every violated rule. Under contention this may refuse a
// request that a single call would have admitted, but never admits more than the rules allow.
// With WaitReplicas, a slot that admits the request must also prove, in the same round
// trip, that enough replicas hold it; when one cannot, every slot is refunded and the error
// wraps otp.ErrUnavailable, as for a Redis that is down.
// Errors from Redis wrap otp.ErrUnavailable and admit nothing; an invalid policy (a rule
// below 1 or 1ms, a key given twice) is an error of its own. Windows count in whole
// milliseconds, finer ones round up.
func (l *Limiter) Allow(ctx context.Context, limits []rate.Limit) (rate.Decision, error) {
	p, err := l.plan(limits)
	if err != nil {
		return rate.Decision{}, fmt.Errorf("ratelimit: allow: %w", err)
	}
	if len(p.keys) == 0 {
		return rate.Decision{Allowed: true}, nil
	}
	id := l.NewID()
	dec := rate.Decision{Rules: p.states(), Guards: p.guardStates(), Budgets: p.budgetStates()}
	groups := l.group(p.keys)
	budget := undoBudget(ctx)
	var at int64 // when the first slot recorded the request, for undoing guard counts
	for i, g := range groups {
		status, now, err := l.run(ctx, modeAllow, id, p, g, &dec, undo{})
		if err != nil {
			held := recorded(groups, i, err)
			err = fmt.Errorf("ratelimit: allow: %w: %w", otp.ErrUnavailable, err)
			if len(held) == 0 {
				return rate.Decision{}, err
			}
			// Nothing will be sent, so what the slots recorded may go. The caller's
			// context may be what failed, so the undo gets a bound of its own.
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
			undo := l.undo(uctx, id, p, held[:len(held)-1], nil, at)
			if undo == nil {
				undo = l.undoUncertain(uctx, id, p, held[len(held)-1], errors.Is(err, errNotReplicated), at)
			}
			cancel()
			return rate.Decision{}, errors.Join(err, undo)
		}
		if i == 0 {
			at = now
		}
		if status == statusReplayed {
			dec.Replayed = true
		}
		if status != statusDenied {
			continue
		}
		if err := l.undo(ctx, id, p, groups[:i], &dec, at); err != nil {
			return rate.Decision{}, err
		}
		for _, g := range groups[i+1:] {
			if _, _, err := l.run(ctx, modePeek, id, p, g, &dec, undo{}); err != nil {
				return rate.Decision{}, fmt.Errorf("ratelimit: allow: %w: %w", otp.ErrUnavailable, err)
			}
		}
		dec.Replayed = false
		return dec, nil
	}
	dec.Allowed = true
	logs, guards, budgets := p.split(dec)
	dec.Reservation = rate.NewReservation(&reservation{id: id, keys: logs, counters: guards, budgets: budgets, at: time.UnixMicro(at).UTC()})
	return dec, nil
}

// undoBound bounds the undo after a failed slot when the caller set no deadline.
const undoBound = time.Second

// undoBudget returns how long Allow may spend undoing the slots it recorded before a later
// one failed: as long again as the caller allowed the whole call, or undoBound without a
// deadline. Unbounded, the client's dial retries against a node that is down would hold
// the 503 back for seconds; an undo cut short only leaves entries that deny a little more
// until their windows pass, never admit more.
func undoBudget(ctx context.Context) time.Duration {
	if deadline, ok := ctx.Deadline(); ok {
		return time.Until(deadline)
	}
	return undoBound
}

// undo removes the request id, recorded at at (µs), from the keys of the given groups, which
// this call recorded it in, and, when dec is not nil, reports their state without it there.
func (l *Limiter) undo(ctx context.Context, id string, p *plan, groups [][]int, dec *rate.Decision, at int64) error {
	for _, g := range groups {
		if _, _, err := l.run(ctx, modeUndo, id, p, g, dec, undo{guards: undoAlways, budgets: budgetAlways, at: at}); err != nil {
			return fmt.Errorf("ratelimit: allow: undo: %w: %w", otp.ErrUnavailable, err)
		}
	}
	return nil
}

// undoUncertain undoes the slot g that failed, whose recording may be on a master that
// is gone. Its counts are given back only when one of its sorted sets still holds the
// request (as Refund does): after a failover, the undo reaches the new master, which never
// held what the lost master recorded, and taking the guard counts and budget costs back
// there would give away what other requests hold, letting spend pass a cap. A slot without
// sorted sets then gives back nothing: it may count the request once too often, which
// refuses more, never admits more. A slot that certainly recorded the request (not
// uncertain: its reply arrived) gives everything back.
func (l *Limiter) undoUncertain(ctx context.Context, id string, p *plan, g []int, uncertain bool, at int64) error {
	u := undo{guards: undoAlways, budgets: budgetAlways, at: at}
	if uncertain {
		u.guards, u.budgets = undoIfHeld, budgetIfHeld
	}
	if _, _, err := l.run(ctx, modeUndo, id, p, g, nil, u); err != nil {
		return fmt.Errorf("ratelimit: allow: undo: %w: %w", otp.ErrUnavailable, err)
	}
	return nil
}

// reservation is what Allow recorded a request under, for Refund: the member id, the
// sorted sets that hold it, the guard counters it was added to at at and the budget windows
// it reserved its cost in. It travels through the domain opaquely, in rate.Reservation.
type reservation struct {
	id       string
	keys     []string
	counters []string
	budgets  []reservedBudget
	at       time.Time
}

// Refund removes a reservation from every key that holds it; an unknown or already refunded
// reservation changes nothing. Errors wrap otp.ErrUnavailable.
//
// Guard counts have no member to remove, so they are taken back only when a sorted set of the
// reservation still held it: in the same call where a slot holds both, else after the slots
// of the sorted sets. A reservation without sorted sets (every rule of its policy off) takes
// its guard counts back unconditionally, so refunding it twice takes them back twice.
func (l *Limiter) Refund(ctx context.Context, res rate.Reservation) error {
	r, ok := res.Value().(*reservation)
	if !ok || r.id == "" || len(r.keys)+len(r.counters)+len(r.budgets) == 0 {
		return nil // the zero Reservation, or one this limiter did not make
	}
	// A reservation names keys only: sorted sets without rules make the script just remove the
	// id, guards without settings just take the request back.
	p := &plan{params: &rate.GuardParams{}}
	for _, k := range r.keys {
		p.entries = append(p.entries, entry{limit: len(p.limits)})
		p.limits = append(p.limits, rate.Limit{})
		p.keys = append(p.keys, k)
	}
	for _, k := range r.counters {
		p.entries = append(p.entries, entry{limit: len(p.limits), guard: true})
		p.limits = append(p.limits, rate.Limit{Guard: &rate.Guard{}})
		p.keys = append(p.keys, k)
	}
	for _, b := range r.budgets {
		p.entries = append(p.entries, entry{limit: len(p.limits), budget: true})
		p.limits = append(p.limits, rate.Limit{Budget: &rate.Budget{Mode: rate.BudgetEnforce, Cost: b.cost, TTL: time.Second,
			Fence: b.fence, Country: b.country}})
		p.keys = append(p.keys, b.key)
	}
	at := r.at.UnixMicro()
	held := len(r.keys) == 0
	var later [][]int // slots of guards alone, decided once the sorted sets have answered
	for _, g := range l.group(p.keys) {
		logs := false
		for _, k := range g {
			logs = logs || !p.entries[k].guard && !p.entries[k].budget
		}
		if !logs {
			later = append(later, g)
			continue
		}
		status, _, err := l.run(ctx, modeUndo, r.id, p, g, nil, undo{guards: undoIfHeld, budgets: budgetIfHeld, at: at})
		if err != nil {
			return fmt.Errorf("ratelimit: refund: %w: %w", otp.ErrUnavailable, err)
		}
		held = held || status == statusHeld
	}
	if !held {
		return nil
	}
	for _, g := range later {
		if _, _, err := l.run(ctx, modeUndo, r.id, p, g, nil, undo{guards: undoAlways, budgets: budgetAlways, at: at}); err != nil {
			return fmt.Errorf("ratelimit: refund: %w: %w", otp.ErrUnavailable, err)
		}
	}
	return nil
}

// Inspect reports the state of one limit without recording anything; a rule at its limit is
// reported violated, since it would refuse the next request. Errors wrap otp.ErrUnavailable.
func (l *Limiter) Inspect(ctx context.Context, lim rate.Limit) ([]rate.RuleState, error) {
	lim.Guard = nil // a guard's state is InspectGuard's
	p, err := l.plan([]rate.Limit{lim})
	if err != nil {
		return nil, fmt.Errorf("ratelimit: inspect: %w", err)
	}
	dec := rate.Decision{Rules: p.states()}
	if len(p.keys) == 0 {
		return dec.Rules, nil
	}
	if _, _, err := l.run(ctx, modePeek, "", p, []int{0}, &dec, undo{}); err != nil {
		return nil, fmt.Errorf("ratelimit: inspect: %w: %w", otp.ErrUnavailable, err)
	}
	return dec.Rules, nil
}

// Reset forgets every request recorded for one scope and key. Errors wrap otp.ErrUnavailable.
func (l *Limiter) Reset(ctx context.Context, scope, key string) error {
	if err := l.rdb.Del(ctx, l.Key(scope, key)).Err(); err != nil {
		return fmt.Errorf("ratelimit: reset: %w: %w", otp.ErrUnavailable, err)
	}
	return nil
}

var _ otp.Limiter = (*Limiter)(nil)
