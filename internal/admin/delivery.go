package admin

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/httpkit"
)

// deliveryResponse is GET /admin/api/delivery.
type deliveryResponse struct {
	Since time.Time      `json:"since"`
	Rates []deliveryRate `json:"rates"`
}

// deliveryRate is one channel, country and provider's sends and receipts.
type deliveryRate struct {
	Channel     string `json:"channel"`
	Country     string `json:"country"`
	Provider    string `json:"provider"`
	Sends       int    `json:"sends"`
	Sent        int    `json:"sent"`
	Delivered   int    `json:"delivered"`
	Undelivered int    `json:"undelivered"`
	Segments    int    `json:"segments"`
	// DeliveryRate is delivered / (delivered + undelivered); null while no receipt came.
	DeliveryRate *float64 `json:"delivery_rate"`
}

func toDeliveryRate(r history.DeliveryRate) deliveryRate {
	out := deliveryRate{Channel: r.Channel, Country: r.Country, Provider: r.Provider, Sends: r.Sends, Sent: r.Sent,
		Delivered: r.Delivered, Undelivered: r.Undelivered, Segments: r.Segments}
	if rate, ok := r.Rate(); ok {
		out.DeliveryRate = &rate
	}
	return out
}

// handleAdminDelivery counts sends and delivery receipts per channel, country and provider.
func handleAdminDelivery(log *slog.Logger, a history.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		since, app, problems := p.deliveryRange(r.URL.Query())
		if len(problems) > 0 {
			writeAdminProblem(w, r, log, invalidParams(problems))
			return
		}
		rates, err := a.DeliveryRates(r.Context(), since, app)
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		out := deliveryResponse{Since: since, Rates: make([]deliveryRate, len(rates))}
		for i, rate := range rates {
			out.Rates[i] = toDeliveryRate(rate)
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// deliverySpans are the ranges the delivery page offers.
var deliverySpans = []string{"1h", "24h", "7d", "30d"}

// deliveryPage is the data of the console's delivery view.
type deliveryPage struct {
	Since    time.Time
	Span     string
	Spans    []string
	App      string
	Apps     []apps.Info
	Rows     []deliveryRow
	Problems []fieldProblem
}

// deliveryRow is one line of the delivery view.
type deliveryRow struct {
	history.DeliveryRate
	// RateLabel is the delivery rate as a percentage, or "–" without receipts.
	RateLabel string
}

// handleDeliveryPage shows delivery rates per channel, country and provider.
func handleDeliveryPage(log *slog.Logger, view *adminView, a history.AdminService, apps apps.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		data := deliveryPage{Span: q.Get("since"), Spans: deliverySpans}
		if !slices.Contains(deliverySpans, data.Span) {
			data.Span = "24h"
		}
		since, app, problems := p.deliveryRange(url.Values{"since": {data.Span}, "app": q["app"]})
		data.Since, data.App = since, app
		if apps != nil {
			var err error
			if data.Apps, err = apps.ListApps(r.Context()); err != nil {
				adminError(w, r, log, view, err)
				return
			}
		}
		status := http.StatusOK
		if len(problems) == 0 {
			rates, err := a.DeliveryRates(r.Context(), since, app)
			if err != nil {
				adminError(w, r, log, view, err)
				return
			}
			for _, rate := range rates {
				label := "–"
				if v, ok := rate.Rate(); ok {
					label = fmt.Sprintf("%.1f%%", 100*v)
				}
				data.Rows = append(data.Rows, deliveryRow{DeliveryRate: rate, RateLabel: label})
			}
		} else {
			status, data.Problems = http.StatusBadRequest, sortedProblems(problems)
		}
		view.render(w, r, status, "delivery", pageData{Title: "Delivery", Nav: "delivery", Data: data})
	})
}
