// Package metrics exposes otpgate's Prometheus metrics. It wraps the otp interfaces
// (Limiter, Store, Sender) and the public API's Verifier in decorators that count and
// time what passes through, so no domain package imports Prometheus. Each server has
// its own registry (never the global one), served by Handler on the admin listener.
//
// Every metric, in one place. Label values come from code or configuration only:
// never a raw path, phone number, IP address or code.
//
//	| metric | type | labels | what it counts |
//	|---|---|---|---|
//	| `otpgate_sends_total` | counter | `outcome`: created, resent, rate_limited, fraud_blocked, blocked, budget_exceeded, duplicate, invalid (invalid_email too), provider_error, unavailable, error | send calls that reached the service |
//	| `otpgate_checks_total` | counter | `outcome`: approved, invalid_code, too_many_attempts, expired, not_found, rate_limited, invalid, unavailable, error | check calls that reached the service |
//	| `otpgate_country_sends_total` | counter | `country` (ISO region, empty for email) | codes handed to a provider (sends created or resent) |
//	| `otpgate_country_approvals_total` | counter | `country` (ISO region, empty for email) | approved checks: with the line above, each country's conversion |
//	| `otpgate_limiter_decisions_total` | counter | `result`: allowed, denied, error | limiter decisions |
//	| `otpgate_limiter_rule_decisions_total` | counter | `scope`, `rule` (as configured, e.g. 10/1h), `result`: allowed, denied | each rule of each decision; denied when that rule refused |
//	| `otpgate_limiter_duration_seconds` | histogram | `op`: allow, refund, inspect, reset | limiter call latency |
//	| `otpgate_store_duration_seconds` | histogram | `op`: begin_send, finish_send, verification, check; `result`: ok, unavailable, error | store call latency |
//	| `otpgate_provider_duration_seconds` | histogram | `provider` (instance name, such as webhook or backup) | provider call latency, failures included |
//	| `otpgate_provider_errors_total` | counter | `provider`; `kind`: definite (never delivered), unknown (timeout, 5xx) | provider failures |
//	| `otpgate_http_requests_total` | counter | `route` (chi pattern, or unmatched), `status` | public API requests |
//	| `otpgate_http_request_duration_seconds` | histogram | `route` | public API request latency |
//	| `otpgate_delivery_attempts_total` | counter | `provider` (instance name), `channel`, `outcome`: sent, failed, unknown, skipped | every provider attempt of a send, failover and breaker skips included |
//	| `otpgate_provider_breaker_state` | gauge | `provider` | the provider's circuit breaker: 0 closed, 1 half-open, 2 open |
//	| `otpgate_deliveries_total` | counter | `provider`, `status`: delivered, undelivered | delivery receipts that settled a send (replays are not counted) |
//	| `otpgate_receipts_rejected_total` | counter | `kind`: each kind that takes callbacks (twilio, webhook, telnyx, infobip, vonage, plivo, sinch); `reason`: invalid_signature, unknown_instance, invalid_request | delivery callbacks refused: forged or stale, for an instance that takes none, or malformed |
//	| `otpgate_sms_total` | counter | `encoding`: GSM-7, UCS-2 | SMS rendered for sending |
//	| `otpgate_sms_segments_total` | counter | `encoding` | the segments those SMS take (what a provider bills) |
//	| `otpgate_history_queue_depth` | gauge | | refused sends waiting for the history writer (always 0 in dev mode) |
//	| `otpgate_history_dropped_total` | counter | | refused sends never written to history: queue full or write failed |
//	| `otpgate_history_written_total` | counter | | refused sends written to history |
//	| `otpgate_outcome_queue_depth` | gauge | | send outcomes (sent, failed) waiting for the outcome writer |
//	| `otpgate_outcome_written_total` | counter | | send outcomes written to history |
//	| `otpgate_outcome_lost_total` | counter | | send outcomes whose write failed; the sweeper settles those sends as unknown |
//	| `otpgate_sweeper_oldest_sending_seconds` | gauge | | age of the oldest send still sending at the sweeper's last pass: how far behind outcomes are |
//	| `otpgate_sweeper_settled_total` | counter | | sends left sending by a stopped server, settled as unknown by this instance |
//	| `otpgate_pii_resealed_total` | counter | | stored addresses re-sealed under the current data key or converted from plain by this instance |
//	| `otpgate_retention_purged_rows_total` | counter | `table`: attempts, sends, verifications, stats_hourly, conversion_hourly, attempts_hourly | rows past retention this instance deleted |
//	| `otpgate_retention_behind_seconds` | gauge | `table` | how far the table's oldest row lay past its horizon at the last pass (0: nothing older left) |
//	| `otpgate_retention_rolled_hours_total` | counter | | hours of history this instance counted into the hourly rollups |
//	| `otpgate_retention_last_pass_timestamp_seconds` | gauge | | when this instance last finished a retention pass that held the lock (0 before the first) |
//	| `otpgate_fraud_decisions_total` | counter | `scope`: country, prefix, ip_net; `mode`: enforce, shadow; `result`: allowed, refused | send decisions per fraud scope and mode; refused when that scope's rules or guard refused (in shadow: would have) |
//	| `otpgate_fraud_shadow_total` | counter | `scope` | sends that shadow fraud rules or the shadow guard would have refused |
//	| `otpgate_fraud_blocks_started_total` | counter | `scope`, `mode` | blocks the fraud guard started |
//	| `otpgate_fraud_blocks_active` | gauge | `scope`, `mode` | fraud guard blocks in force, as last counted |
//	| `otpgate_spend_total` | counter | `app`, `country` (ISO region, empty for email), `channel` | the estimated cost of sends handed to a provider, in the price table's currency (refused sends and test numbers cost nothing) |
//	| `otpgate_spend_actual_total` | counter | `app`, `country`, `channel`, `currency` (ISO 4217, the provider's) | what providers reported sends actually cost (Twilio's callback price), counted once per send when the receipt records it |
//	| `otpgate_budget_used_ratio` | gauge | `budget`, `period`: day, month | what each budget's current window has spent, as a fraction of its cap, as this instance last saw it |
//	| `otpgate_budget_shadow_total` | counter | `budget` | sends a shadow budget would have refused and let through |
//	| `go_*`, `process_*` | | | the Go runtime and the process, from the standard collectors |
//
// Sends and checks are counted when they reach the service: requests the API refuses
// before that (malformed JSON, a bad Idempotency-Key, an idempotent replay) show only
// in otpgate_http_requests_total. The store counts domain answers (no such
// verification, send budget spent) as ok: the store did its job.
package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Bucket boundaries in seconds. Redis answers in well under a millisecond and the
// limiter times out at 200ms by default; Postgres takes a little longer; an SMS
// provider may take seconds before its timeout.
var (
	fastBuckets     = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	storeBuckets    = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}
	providerBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	httpBuckets     = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
)

// Metrics holds one server's registry and every otpgate collector in it.
type Metrics struct {
	reg *prometheus.Registry

	sends            *prometheus.CounterVec
	checks           *prometheus.CounterVec
	decisions        *prometheus.CounterVec
	ruleDecisions    *prometheus.CounterVec
	limiterDuration  *prometheus.HistogramVec
	storeDuration    *prometheus.HistogramVec
	providerDuration *prometheus.HistogramVec
	providerErrors   *prometheus.CounterVec
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	delivery         *deliveryMetrics

	// httpSeries keeps each (route, status)'s httpSeries (http.go); outcomes each outcome
	// label's counter of sends and checks (verifier.go): a request then looks its series up
	// instead of hashing their labels.
	httpSeries sync.Map
	outcomes   sync.Map
	fraud      fraudMetrics
	spend      spendMetrics
	conversion conversionMetrics
	// rejected counts refused delivery callbacks, registered by the first ReceiptReceiver.
	rejected     *prometheus.CounterVec
	rejectedOnce sync.Once
}

// New returns metrics on a fresh registry that also holds the Go and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_sends_total", Help: "Send calls that reached the service, by outcome.",
		}, []string{"outcome"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_checks_total", Help: "Check calls that reached the service, by outcome.",
		}, []string{"outcome"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_limiter_decisions_total", Help: "Limiter decisions: allowed, denied or error.",
		}, []string{"result"}),
		ruleDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_limiter_rule_decisions_total",
			Help: "Each rule of each limiter decision: denied when that rule refused the request, else allowed.",
		}, []string{"scope", "rule", "result"}),
		limiterDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "otpgate_limiter_duration_seconds", Help: "Latency of limiter calls.", Buckets: fastBuckets,
		}, []string{"op"}),
		storeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "otpgate_store_duration_seconds", Help: "Latency of store calls.", Buckets: storeBuckets,
		}, []string{"op", "result"}),
		providerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "otpgate_provider_duration_seconds", Help: "Latency of SMS provider calls.", Buckets: providerBuckets,
		}, []string{"provider"}),
		providerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_provider_errors_total",
			Help: "SMS provider failures: definite (never delivered) or unknown (may have been delivered).",
		}, []string{"provider", "kind"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_http_requests_total", Help: "Public API requests by route pattern and status.",
		}, []string{"route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "otpgate_http_request_duration_seconds", Help: "Latency of public API requests.", Buckets: httpBuckets,
		}, []string{"route"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.sends, m.checks, m.decisions, m.ruleDecisions, m.limiterDuration,
		m.storeDuration, m.providerDuration, m.providerErrors, m.httpRequests, m.httpDuration,
	)
	m.delivery = newDeliveryMetrics(m.reg)
	m.fraud = registerFraud(m.reg)
	m.spend = registerSpend(m.reg)
	m.conversion = registerConversion(m.reg)
	// Known label values start at zero, so rates and alerts work before the first event.
	for _, o := range sendOutcomes {
		m.sends.WithLabelValues(o)
	}
	for _, o := range checkOutcomes {
		m.checks.WithLabelValues(o)
	}
	for _, r := range []string{resultAllowed, resultDenied, resultError} {
		m.decisions.WithLabelValues(r)
	}
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
