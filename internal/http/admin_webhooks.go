package http

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/events"
	"otpgate/internal/otp"
)

// webhookRequest is the body of POST /admin/api/apps/{id}/webhooks.
type webhookRequest struct {
	URL        string   `json:"url"`
	Secret     string   `json:"secret"`
	EventTypes []string `json:"event_types"`
}

// adminWebhook is one endpoint as the admin API shows it; Secret only in the answer that
// made it.
type adminWebhook struct {
	ID         string    `json:"id"`
	AppID      string    `json:"app_id"`
	URL        string    `json:"url"`
	EventTypes []string  `json:"event_types"`
	CreatedAt  time.Time `json:"created_at"`
	Secret     string    `json:"secret,omitempty"`
}

func toAdminWebhook(e events.Endpoint) adminWebhook {
	return adminWebhook{ID: e.ID, AppID: e.AppID, URL: e.URL, EventTypes: nonNil(e.Types), CreatedAt: e.CreatedAt}
}

// webhooksResponse is GET /admin/api/apps/{id}/webhooks.
type webhooksResponse struct {
	Webhooks []adminWebhook `json:"webhooks"`
}

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

// testResponse is POST /admin/api/apps/{id}/webhooks/{wid}/test.
type testResponse struct {
	EventID   string `json:"event_id"`
	Delivered bool   `json:"delivered"`
	// Status is the receiver's HTTP status; null when it gave none.
	Status *int   `json:"status"`
	Error  string `json:"error"`
}

var errAdminNoSuchWebhook = otp.Errorf(otp.CodeNotFound, "there is no such app, webhook or event")

// webhookNotFound names a missing app, endpoint or event in the admin API's answer.
func webhookNotFound(err error) error {
	if errors.Is(err, otp.ErrNotFound) {
		return errAdminNoSuchWebhook
	}
	return err
}

// handleAdminWebhooks serves GET (list) and POST (add) /admin/api/apps/{id}/webhooks.
func handleAdminWebhooks(log *slog.Logger, a events.AdminService) http.Handler {
	requests := newDecoder[webhookRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, app := r.Context(), chi.URLParam(r, "id")
		if r.Method == http.MethodGet {
			list, err := a.Webhooks(ctx, app)
			if err != nil {
				writeAdminProblem(w, r, log, webhookNotFound(err))
				return
			}
			out := webhooksResponse{Webhooks: make([]adminWebhook, len(list))}
			for i, e := range list {
				out.Webhooks[i] = toAdminWebhook(e)
			}
			_ = encode(w, http.StatusOK, out)
			return
		}
		body, err := readJSON(r)
		var req webhookRequest
		if err == nil {
			req, err = requests.decode(body)
		}
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		e, secret, err := a.AddWebhook(ctx, app, events.EndpointInput{URL: req.URL, Secret: req.Secret, Types: req.EventTypes}, actorFrom(ctx))
		if err != nil {
			writeAdminProblem(w, r, log, webhookNotFound(err))
			return
		}
		out := toAdminWebhook(e)
		out.Secret = secret
		w.Header().Set("Location", "/admin/api/apps/"+e.AppID+"/webhooks/"+e.ID)
		_ = encode(w, http.StatusCreated, out)
	})
}

// handleAdminWebhook serves DELETE /admin/api/apps/{id}/webhooks/{wid}.
func handleAdminWebhook(log *slog.Logger, a events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.DeleteWebhook(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid"), actorFrom(r.Context())); err != nil {
			writeAdminProblem(w, r, log, webhookNotFound(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
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
		_ = encode(w, http.StatusOK, out)
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
		_ = encode(w, http.StatusOK, toAdminDelivery(d))
	})
}

// handleAdminWebhookTest serves POST /admin/api/apps/{id}/webhooks/{wid}/test.
func handleAdminWebhookTest(log *slog.Logger, a events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := a.TestWebhook(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid"))
		if err != nil {
			writeAdminProblem(w, r, log, webhookNotFound(err))
			return
		}
		out := testResponse{EventID: res.EventID, Delivered: res.Delivered, Error: res.Error}
		if res.HTTPStatus != 0 {
			out.Status = &res.HTTPStatus
		}
		_ = encode(w, http.StatusOK, out)
	})
}
