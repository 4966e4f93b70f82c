package main

import (
	"log/slog"

	"otpgate/internal/events"
	"otpgate/internal/metrics"
	"otpgate/internal/tracing"
)

// eventLoops are the event dispatcher and the expiry job of one instance.
type eventLoops struct {
	dispatcher *events.Dispatcher
	expirer    *events.Expirer
	sealer     *events.Sealer
}

// newEventLoops builds the dispatcher and the expiry job over the parts' store, sealing
// endpoint secrets with a key derived from the OTP secret, and registers their metrics.
// Deliveries are traced with the parts' tracer, joining the traces origins remembers.
func newEventLoops(cfg config, p *parts, log *slog.Logger, mx *metrics.Metrics, origins *tracing.Origins) (*eventLoops, error) {
	sealer, err := events.NewSealer(p.secret)
	if err != nil {
		return nil, err
	}
	opts := cfg.eventOptions()
	opts.Tracer = p.tracer
	if origins != nil {
		opts.Origins = origins
	}
	ev := &eventLoops{
		dispatcher: events.NewDispatcher(p.store, sealer, log, opts),
		expirer:    events.NewExpirer(p.store, log, cfg.ExpireInterval),
		sealer:     sealer,
	}
	mx.Events(metrics.EventCounters{
		Delivered: ev.dispatcher.Delivered, Retried: ev.dispatcher.Retried, Parked: ev.dispatcher.Parked,
		Oldest: ev.dispatcher.OldestAge, Expired: ev.expirer.Expired, BlocksEnded: ev.expirer.Ended,
	})
	return ev, nil
}
