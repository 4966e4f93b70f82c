package server

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	oteltrace "go.opentelemetry.io/otel/trace"

	"otpgate/internal/delivery"
	"otpgate/internal/message"
	"otpgate/internal/metrics"
	"otpgate/internal/otp"
	"otpgate/internal/providers"
	"otpgate/internal/receipt"
)

// deliveryParts carry messages: the router over every provider instance, the renderer
// of their text, and the readers of the instances' delivery receipts by source name.
type deliveryParts struct {
	router   *delivery.Router
	renderer otp.Renderer
	// catalog is the renderer's templates, which the Twilio API's Templates resource lists.
	catalog *message.Catalog
	readers map[string]receipt.Reader
	// receiptKinds are the kinds that take delivery callbacks, whose refusals are counted.
	receiptKinds []string
}

// newDelivery builds each provider instance as its kind says (internal/providers), with
// its sender counted in metrics under its name and its receipt reader, if it has one,
// under "<kind>/<name>"; then the routes and breakers over them, and the message catalog.
// tp traces provider attempts and the HTTP kinds' requests; nil traces nothing.
func newDelivery(cfg config, log *slog.Logger, mx *metrics.Metrics, tp oteltrace.TracerProvider) (*deliveryParts, error) {
	catalog, err := message.New(nil)
	if err != nil {
		return nil, err
	}
	d := &deliveryParts{renderer: mx.Renderer(catalog), catalog: catalog, readers: map[string]receipt.Reader{}}
	for _, k := range providers.Kinds() {
		if k.Receipts {
			d.receiptKinds = append(d.receiptKinds, k.Name)
		}
	}
	opts := providers.Options{Log: log, ShowCodes: cfg.dev, Timeout: cfg.SMSTimeout, PublicURL: cfg.PublicURL, Outbound: cfg.outbound, Tracer: tp}
	var table []delivery.Provider
	for _, s := range cfg.instances {
		b, err := providers.Build(s, opts)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if b.Receipts != nil {
			d.readers[s.Kind+"/"+s.Name] = b.Receipts
		}
		b.Sender = mx.Sender(b.Sender)
		table = append(table, b.Provider)
	}
	mx.Providers(cfg.instanceNames()...)
	routes := map[string]delivery.Routes{}
	for _, t := range cfg.routeTables() {
		if t.routes == nil {
			continue
		}
		if err := carried(t, table); err != nil {
			return nil, err
		}
		routes[t.channel] = t.routes
	}
	d.router, err = delivery.New(delivery.Config{
		Providers: table, Routes: routes, FailoverOnUnknown: cfg.FailoverOnUnknown,
		Breaker:        delivery.BreakerConfig{Failures: cfg.BreakerFailures, Cooldown: cfg.BreakerCooldown},
		AttemptTimeout: cfg.SMSTimeout, Observer: mx.DeliveryObserver(), Tracer: tp,
	})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return d, nil
}

// carried refuses a route table that sends a channel to an instance not configured for
// it, such as a Twilio account without TWILIO_VOICE_FROM in VOICE_ROUTES.
func carried(t routeTable, table []delivery.Provider) error {
	for _, r := range t.routes {
		for _, name := range r.Providers {
			i := slices.IndexFunc(table, func(p delivery.Provider) bool { return p.Name == name })
			if i >= 0 && !slices.Contains(table[i].Channels, t.channel) {
				return fmt.Errorf("config: %s=%q: provider %s is not configured for %s (it carries %s)",
					t.variable, t.routes.String(), name, t.channel, strings.Join(table[i].Channels, ", "))
			}
		}
	}
	return nil
}
