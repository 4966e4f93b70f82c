package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/httpkit"
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
	requests := httpkit.NewDecoder[webhookRequest]()
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
			_ = httpkit.Encode(w, http.StatusOK, out)
			return
		}
		body, err := httpkit.ReadJSON(r)
		var req webhookRequest
		if err == nil {
			req, err = requests.Decode(body)
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
		_ = httpkit.Encode(w, http.StatusCreated, out)
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

// handleAdminWebhookTest serves POST /admin/api/apps/{id}/webhooks/{wid}/test.
func handleAdminWebhookTest(log *slog.Logger, a events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := a.TestWebhook(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid"), actorFrom(r.Context()))
		if err != nil {
			writeAdminProblem(w, r, log, webhookNotFound(err))
			return
		}
		out := testResponse{EventID: res.EventID, Delivered: res.Delivered, Error: res.Error}
		if res.HTTPStatus != 0 {
			out.Status = &res.HTTPStatus
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

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
func handleWebhookAddPage(log *slog.Logger, view *adminView, a apps.AdminService, hooks events.AdminService) http.Handler {
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
func handleWebhookTestPage(log *slog.Logger, view *adminView, a apps.AdminService, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id, wid := r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "wid")
		res, err := hooks.TestWebhook(ctx, id, wid, actorFrom(ctx))
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
