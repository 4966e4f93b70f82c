package http

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/events"
	"otpgate/internal/otp"
)

// hooksSection is what the app page shows of the app's webhook endpoints.
type hooksSection struct {
	Endpoints []events.Endpoint
	// Types are the event types the form offers.
	Types []string
	// Form keeps what was typed into the add form when it is shown again with problems.
	Form webhookForm
	// Created is the endpoint just added with its secret, shown once.
	Created *createdWebhook
	// Tested is the outcome of a test-send.
	Tested *testedWebhook
}

// webhookForm is the add form as typed.
type webhookForm struct {
	URL   string
	Types map[string]bool
}

type createdWebhook struct {
	Endpoint events.Endpoint
	Secret   string
}

type testedWebhook struct {
	URL    string
	Result events.TestResult
}

// handleWebhookAddPage adds an endpoint from the app page's form and shows its secret
// once, on the app page itself: the answer is not a redirect, so the secret is in no URL.
func handleWebhookAddPage(log *slog.Logger, view *adminView, a otp.AppAdmin, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		in := events.EndpointInput{URL: r.PostForm.Get("url"), Secret: r.PostForm.Get("secret"), Types: r.PostForm["event_types"]}
		e, secret, err := hooks.AddWebhook(ctx, id, in, actorFrom(ctx))
		var invalid *otp.ErrInvalidRequest
		switch {
		case errors.As(err, &invalid):
			form := webhookForm{URL: in.URL, Types: map[string]bool{}}
			for _, t := range in.Types {
				form.Types[t] = true
			}
			renderApp(w, r, log, view, a, hooks, id, http.StatusBadRequest, invalid.Fields, nil, nil, hooksSection{Form: form})
		case err != nil:
			adminError(w, r, log, view, webhookNotFound(err))
		default:
			renderApp(w, r, log, view, a, hooks, id, http.StatusCreated, nil, nil, nil,
				hooksSection{Created: &createdWebhook{Endpoint: e, Secret: secret}})
		}
	})
}

// handleWebhookTestPage test-sends to an endpoint and shows how it went on the app page.
func handleWebhookTestPage(log *slog.Logger, view *adminView, a otp.AppAdmin, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id, wid := r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid")
		res, err := hooks.TestWebhook(ctx, id, wid)
		if err != nil {
			adminError(w, r, log, view, webhookNotFound(err))
			return
		}
		tested := &testedWebhook{Result: res}
		if list, err := hooks.Webhooks(ctx, id); err == nil {
			for _, e := range list {
				if e.ID == wid {
					tested.URL = e.URL
				}
			}
		}
		renderApp(w, r, log, view, a, hooks, id, http.StatusOK, nil, nil, nil, hooksSection{Tested: tested})
	})
}

// handleWebhookDeletePage removes an endpoint and goes back to the app page.
func handleWebhookDeletePage(log *slog.Logger, view *adminView, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		if err := hooks.DeleteWebhook(r.Context(), id, chi.URLParam(r, "wid"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, webhookNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/apps/"+url.PathEscape(id)+"#webhooks", http.StatusSeeOther)
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
func handleDeliveriesPage(log *slog.Logger, view *adminView, a otp.AppAdmin, hooks events.AdminService) http.Handler {
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
