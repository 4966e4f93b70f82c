package server

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
)

// phase orders the stop of the background loops: the loops of a phase are stopped only
// once every loop of the phases before it has returned. The server's phases, and why
// each is where it is, are in background.go.
type phase int

// loop is one background loop of the server, in the one shape they all share.
type loop struct {
	name string
	// run works until its context ends. An error it returns is logged, and the other
	// loops run on, as they would without it.
	run func(ctx context.Context) error
	// flush, when set, is called at stop before run's context ends, so that the loop
	// writes what it holds while it still runs; its context is the shutdown deadline.
	flush func(ctx context.Context) error
	// stop is the phase the loop stops in.
	stop phase
	// off leaves the loop out: a part this setup does not have, or a job turned off.
	off bool
}

// startLoops starts the loops in the table's order, each in its own goroutine. The loops
// get ctx's values but not its end: they stop only when the returned function is called,
// which stops them phase by phase: in each phase it calls the flushes in the table's
// order, ends the phase's context and waits for its loops to return. The stop's ctx bounds
// the flushes, not the wait, so that no loop is left running behind the pools it writes to.
func startLoops(ctx context.Context, log *slog.Logger, loops []loop) (stop func(ctx context.Context)) {
	type group struct {
		ctx    context.Context
		cancel context.CancelFunc
		loops  []loop
		wg     sync.WaitGroup
	}
	base := context.WithoutCancel(ctx)
	groups := map[phase]*group{}
	for _, l := range loops {
		if l.off {
			continue
		}
		g := groups[l.stop]
		if g == nil {
			g = &group{}
			g.ctx, g.cancel = context.WithCancel(base)
			groups[l.stop] = g
		}
		g.loops = append(g.loops, l)
		g.wg.Go(func() {
			if err := l.run(g.ctx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error(l.name+" stopped", "err", err)
			}
		})
	}
	return func(ctx context.Context) {
		for _, ph := range slices.Sorted(maps.Keys(groups)) {
			g := groups[ph]
			for _, l := range g.loops {
				if l.flush == nil {
					continue
				}
				if err := l.flush(ctx); err != nil {
					log.Error(l.name+" flush", "err", err)
				}
			}
			g.cancel()
			g.wg.Wait()
		}
	}
}
