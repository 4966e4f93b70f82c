package admin

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// adminDelivery is one event's delivery to one endpoint.
type adminDelivery struct {
	EventID       string          `json:"event_id"`
	Type          string          `json:"type"`
	CreatedAt     time.Time       `json:"created_at"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	NextAttemptAt *time.Time      `json:"next_attempt_at"`
	LastAttemptAt *time.Time      `json:"last_attempt_at"`
	LastStatus    *int            `json:"last_status"`
	LastError     string          `json:"last_error"`
	DeliveredAt   *time.Time      `json:"delivered_at"`
	Data          json.RawMessage `json:"data"`
}

func toAdminDelivery(d events.Delivery) adminDelivery {
	out := adminDelivery{
		EventID: d.Event.ID, Type: d.Event.Type, CreatedAt: d.Event.CreatedAt, Status: d.Status, Attempts: d.Attempts,
		LastAttemptAt: timeOrNil(d.LastAttemptAt), LastError: d.LastError, DeliveredAt: timeOrNil(d.DeliveredAt), Data: d.Event.Data,
	}
	if d.Status == events.Pending {
		out.NextAttemptAt = timeOrNil(d.NextAttemptAt)
	}
	if d.LastStatus != 0 {
		out.LastStatus = &d.LastStatus
	}
	return out
}

// deliveriesResponse is GET /admin/api/apps/{id}/webhooks/{wid}/deliveries.
type deliveriesResponse struct {
	Deliveries []adminDelivery `json:"deliveries"`
}

// deliveryFilter reads ?status= and ?limit=.
func deliveryFilter(r *http.Request) (events.DeliveryFilter, error) {
	q := r.URL.Query()
	f := events.DeliveryFilter{Status: q.Get("status")}
	problems := map[string]string{}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > events.MaxDeliveries {
			problems["limit"] = "must be between 1 and " + strconv.Itoa(events.MaxDeliveries)
		}
		f.Limit = n
	}
	if err := f.Validate(); err != nil {
		var invalid *otp.ErrInvalidRequest
		if errors.As(err, &invalid) {
			for k, v := range invalid.Fields {
				problems[k] = v
			}
		}
	}
	if len(problems) > 0 {
		return f, invalidParams(problems)
	}
	return f, nil
}

// handleAdminDeliveries serves GET /admin/api/apps/{id}/webhooks/{wid}/deliveries.
func handleAdminDeliveries(log *slog.Logger, a events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := deliveryFilter(r)
		var list []events.Delivery
		if err == nil {
			list, err = a.Deliveries(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid"), f)
		}
		if err != nil {
			writeAdminProblem(w, r, log, webhookNotFound(err))
			return
		}
		out := deliveriesResponse{Deliveries: make([]adminDelivery, len(list))}
		for i, d := range list {
			out.Deliveries[i] = toAdminDelivery(d)
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// handleAdminRedeliver serves POST /admin/api/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver.
func handleAdminRedeliver(log *slog.Logger, a events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := a.Redeliver(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid"), chi.URLParam(r, "eid"), actorFrom(r.Context()))
		if err != nil {
			writeAdminProblem(w, r, log, webhookNotFound(err))
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toAdminDelivery(d))
	})
}

// deliveriesPage is the data of webhook.html.
type deliveriesPage struct {
	App        otp.App
	Endpoint   events.Endpoint
	Status     string
	Statuses   []string
	Deliveries []events.Delivery
}

// handleDeliveriesPage lists an endpoint's deliveries, newest first, optionally of one status.
func handleDeliveriesPage(log *slog.Logger, view *adminView, a apps.AdminService, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id, wid := r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid")
		info, err := a.GetApp(ctx, id)
		if err != nil {
			adminError(w, r, log, view, appNotFound(err))
			return
		}
		data := deliveriesPage{App: info.App, Status: r.URL.Query().Get("status"), Statuses: []string{events.Pending, events.Delivered, events.Parked}}
		list, err := hooks.Webhooks(ctx, id)
		if err == nil {
			err = errAdminNoSuchWebhook
			for _, e := range list {
				if e.ID == wid {
					data.Endpoint, err = e, nil
				}
			}
		}
		if err == nil {
			data.Deliveries, err = hooks.Deliveries(ctx, id, wid, events.DeliveryFilter{Status: data.Status, Limit: 200})
		}
		if err != nil {
			adminError(w, r, log, view, webhookNotFound(err))
			return
		}
		view.render(w, r, http.StatusOK, "webhook", pageData{Title: "Webhook deliveries", Nav: "apps", Data: data})
	})
}

// handleRedeliverPage makes an event due again and goes back to the deliveries.
func handleRedeliverPage(log *slog.Logger, view *adminView, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, wid := chi.URLParam(r, "id"), chi.URLParam(r, "wid")
		if _, err := hooks.Redeliver(r.Context(), id, wid, chi.URLParam(r, "eid"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, webhookNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/apps/"+url.PathEscape(id)+"/webhooks/"+url.PathEscape(wid), http.StatusSeeOther)
	})
}
