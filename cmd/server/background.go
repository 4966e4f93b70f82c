package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// startBackground runs the loops of the parts besides the history writer: the outcome
// writer and the sweeper (production only), the history retention job, the event
// dispatcher and the expiry job. The returned stop ends them once no request runs any
// more: the sweeper, the retention job and the expiry job at once, the outcome writer
// after writing what is queued (waiting at most until ctx ends), then the dispatcher after
// the deliveries in flight.
func (s *services) startBackground(p *parts, log *slog.Logger) (stop func(ctx context.Context)) {
	ev := s.events
	ctx, cancel := context.WithCancel(context.Background())
	evCtx, stopEvents := context.WithCancel(context.Background())
	var wg, evWG sync.WaitGroup
	evWG.Go(func() { _ = ev.dispatcher.Run(evCtx) })
	wg.Go(func() { _ = ev.expirer.Run(ctx) })
	if p.outcomes != nil {
		wg.Go(func() {
			if err := p.outcomes.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("outcome writer stopped", "err", err)
			}
		})
	}
	if p.sweeper != nil {
		wg.Go(func() {
			if err := p.sweeper.Run(ctx); err != nil {
				log.Error("sweeper stopped", "err", err)
			}
		})
	}
	if s.retention != nil {
		wg.Go(func() {
			if err := s.retention.Run(ctx); err != nil {
				log.Error("history retention stopped", "err", err)
			}
		})
	}
	return func(sctx context.Context) {
		if p.outcomes != nil {
			if err := p.outcomes.Close(sctx); err != nil {
				log.Error("outcome writer flush", "err", err)
			}
		}
		cancel()
		wg.Wait()
		// Last, so the events of outcomes written at shutdown get their first attempt.
		stopEvents()
		evWG.Wait()
	}
}
