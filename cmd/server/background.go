package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// startBackground runs the loops of the production parts besides the history writer: the
// outcome writer and the sweeper. The returned stop ends them once no request runs any
// more: the sweeper at once, the outcome writer after writing what is queued, waiting at
// most until ctx ends. In dev mode there is nothing to run.
func (p *parts) startBackground(log *slog.Logger) (stop func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
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
	return func(sctx context.Context) {
		if p.outcomes != nil {
			if err := p.outcomes.Close(sctx); err != nil {
				log.Error("outcome writer flush", "err", err)
			}
		}
		cancel()
		wg.Wait()
	}
}
