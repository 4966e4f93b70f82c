package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// deliveryMetrics are the collectors of routing, receipts and SMS encodings.
type deliveryMetrics struct {
	attempts   *prometheus.CounterVec
	breaker    *prometheus.GaugeVec
	deliveries *prometheus.CounterVec
	sms        *prometheus.CounterVec
	segments   *prometheus.CounterVec
}

func newDeliveryMetrics(reg prometheus.Registerer) *deliveryMetrics {
	d := &deliveryMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_delivery_attempts_total", Help: "Provider attempts per provider instance, channel and outcome (sent, failed, unknown, skipped).",
		}, []string{"provider", "channel", "outcome"}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "otpgate_provider_breaker_state", Help: "Each provider's circuit breaker: 0 closed, 1 half-open, 2 open.",
		}, []string{"provider"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_deliveries_total", Help: "Delivery receipts that settled a send, by provider and status (delivered, undelivered).",
		}, []string{"provider", "status"}),
		sms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_sms_total", Help: "SMS rendered for sending, by encoding (GSM-7, UCS-2).",
		}, []string{"encoding"}),
		segments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_sms_segments_total", Help: "Segments of the SMS rendered for sending, by encoding.",
		}, []string{"encoding"}),
	}
	reg.MustRegister(d.attempts, d.breaker, d.deliveries, d.sms, d.segments)
	for _, e := range []string{otp.EncodingGSM7, otp.EncodingUCS2} {
		d.sms.WithLabelValues(e)
		d.segments.WithLabelValues(e)
	}
	return d
}

// DeliveryObserver returns the router's observer: it counts attempts and tracks breakers.
func (m *Metrics) DeliveryObserver() delivery.Observer { return deliveryObserver{m.delivery} }

type deliveryObserver struct{ d *deliveryMetrics }

func (o deliveryObserver) Attempt(channel string, a otp.ProviderAttempt) {
	o.d.attempts.WithLabelValues(a.Provider, channel, string(a.Outcome)).Inc()
}

func (o deliveryObserver) BreakerChanged(provider string, s delivery.BreakerState) {
	v := map[delivery.BreakerState]float64{delivery.BreakerClosed: 0, delivery.BreakerHalfOpen: 1, delivery.BreakerOpen: 2}[s]
	o.d.breaker.WithLabelValues(provider).Set(v)
}

// Providers starts every provider's breaker gauge and delivery counters at zero.
func (m *Metrics) Providers(names ...string) {
	for _, n := range names {
		m.delivery.breaker.WithLabelValues(n)
		for _, s := range []string{receipt.DeliveryDelivered, receipt.DeliveryUndelivered} {
			m.delivery.deliveries.WithLabelValues(n, s)
		}
	}
}

// Receipts wraps next so that every receipt that settles a send is counted, and every
// actual price a receipt records is added up.
func (m *Metrics) Receipts(next receipt.Store) receipt.Store {
	return receipts{next, m.delivery, m.spend.actual}
}

type receipts struct {
	next   receipt.Store
	d      *deliveryMetrics
	actual *prometheus.CounterVec
}

func (r receipts) MarkDelivery(ctx context.Context, rc receipt.Receipt) (receipt.Marked, error) {
	m, err := r.next.MarkDelivery(ctx, rc)
	if m.Settled {
		r.d.deliveries.WithLabelValues(rc.Provider, rc.Status).Inc()
	}
	if m.Priced {
		r.actual.WithLabelValues(m.App, m.Country, m.Channel, rc.Price.Currency).Add(float64(rc.Price.Micros) / 1e6)
	}
	return m, err
}

// Renderer wraps next so that every SMS rendered is counted with its segments.
func (m *Metrics) Renderer(next otp.Renderer) otp.Renderer { return renderer{next, m.delivery} }

type renderer struct {
	otp.Renderer
	d *deliveryMetrics
}

func (r renderer) Render(p otp.MessageParams) (otp.MessageContent, error) {
	c, err := r.Renderer.Render(p)
	if err == nil && c.Encoding != "" {
		r.d.sms.WithLabelValues(c.Encoding).Inc()
		r.d.segments.WithLabelValues(c.Encoding).Add(float64(c.Segments))
	}
	return c, err
}
