package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/contact"
)

// conversionMetrics count the codes sent and approved per country: their ratio is each
// country's conversion, in which pumping shows as many sends and few approvals. The
// country is an ISO region, so the series are bounded by the countries served.
type conversionMetrics struct {
	sent     *prometheus.CounterVec
	approved *prometheus.CounterVec
}

func registerConversion(reg *prometheus.Registry) conversionMetrics {
	c := conversionMetrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_country_sends_total",
			Help: "Codes handed to a provider (sends created or resent), by the number's country; empty for email.",
		}, []string{"country"}),
		approved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_country_approvals_total",
			Help: "Approved checks, by the number's country; empty for email.",
		}, []string{"country"}),
	}
	reg.MustRegister(c.sent, c.approved)
	return c
}

// addressCountry is the ISO region of a verification's number: empty for an email
// address, as otpgate_spend_total's country, or for a stored number that does not parse.
func addressCountry(address string) string {
	if contact.IsEmailAddress(address) {
		return ""
	}
	_, region, err := contact.NormalizePhone(address, "")
	if err != nil {
		return ""
	}
	return region
}
