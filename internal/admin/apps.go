package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// appNotFound names a missing app (or key) in the admin API's answer.
func appNotFound(err error) error {
	if errors.Is(err, otp.ErrNotFound) {
		return errAdminNoSuchApp
	}
	return err
}

var errAdminNoSuchApp = otp.Errorf(otp.CodeNotFound, "there is no such app or key")

// handleAdminApps serves GET (list) and POST (create) /admin/api/apps.
func handleAdminApps(log *slog.Logger, a apps.AdminService) http.Handler {
	requests := httpkit.NewDecoder[appRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			infos, err := a.ListApps(r.Context())
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			out := appsResponse{Apps: make([]adminApp, len(infos))}
			for i, info := range infos {
				out.Apps[i] = toAdminApp(info)
			}
			_ = httpkit.Encode(w, http.StatusOK, out)
			return
		}
		p, err := decodeAppPatch(r, requests)
		if err == nil {
			var info apps.Info
			if info, err = a.CreateApp(r.Context(), p, actorFrom(r.Context())); err == nil {
				w.Header().Set("Location", "/admin/api/apps/"+info.App.ID)
				_ = httpkit.Encode(w, http.StatusCreated, toAdminApp(info))
				return
			}
		}
		writeAdminProblem(w, r, log, err)
	})
}

// decodeAppPatch reads an appRequest body strictly into a patch.
func decodeAppPatch(r *http.Request, requests httpkit.Decoder[appRequest]) (apps.Patch, error) {
	body, err := httpkit.ReadJSON(r)
	if err != nil {
		return apps.Patch{}, err
	}
	req, err := requests.Decode(body)
	if err != nil {
		return apps.Patch{}, err
	}
	return req.patch(), nil
}

// handleAdminApp serves GET, PATCH and DELETE /admin/api/apps/{id}.
func handleAdminApp(log *slog.Logger, a apps.AdminService) http.Handler {
	requests := httpkit.NewDecoder[appRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		var (
			info apps.Info
			err  error
		)
		switch r.Method {
		case http.MethodGet:
			info, err = a.GetApp(ctx, id)
		case http.MethodPatch:
			var p apps.Patch
			if p, err = decodeAppPatch(r, requests); err == nil {
				info, err = a.UpdateApp(ctx, id, p, actorFrom(ctx))
			}
		case http.MethodDelete:
			if err = a.DeleteApp(ctx, id, actorFrom(ctx)); err == nil {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if err != nil {
			writeAdminProblem(w, r, log, appNotFound(err))
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toAdminApp(info))
	})
}

// handleAppsPage lists the apps with a form for a new one (GET), or creates it (POST).
func handleAppsPage(log *slog.Logger, view *adminView, a apps.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		infos, err := a.ListApps(ctx)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data := appsPage{Apps: infos, Form: newAppForm(infos[0].App)}
		data.Form.Name = ""
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
				return
			}
			p, problems := patchOf(r.PostForm)
			if len(problems) == 0 {
				info, err := a.CreateApp(ctx, p, actorFrom(ctx))
				if err == nil {
					http.Redirect(w, r, "/admin/apps/"+info.App.ID, http.StatusSeeOther)
					return
				}
				if problems, _ = invalidFields(err); problems == nil {
					adminError(w, r, log, view, err)
					return
				}
			}
			data.Form, data.Problems = formOf(r.PostForm), sortedProblems(problems)
			view.render(w, r, http.StatusBadRequest, "apps", pageData{Title: "Apps", Nav: "apps", Data: data})
			return
		}
		view.render(w, r, http.StatusOK, "apps", pageData{Title: "Apps", Nav: "apps", Data: data})
	})
}

// handleAppPage shows an app with its keys (GET) or saves its settings (POST).
func handleAppPage(log *slog.Logger, view *adminView, a apps.AdminService, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		status, problems := http.StatusOK, map[string]string(nil)
		var form *appForm
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
				return
			}
			p, bad := patchOf(r.PostForm)
			var err error
			if len(bad) == 0 {
				if _, err = a.UpdateApp(ctx, id, p, actorFrom(ctx)); err == nil {
					http.Redirect(w, r, "/admin/apps/"+id, http.StatusSeeOther)
					return
				}
				if bad, _ = invalidFields(err); bad == nil {
					adminError(w, r, log, view, appNotFound(err))
					return
				}
			}
			f := formOf(r.PostForm)
			status, problems, form = http.StatusBadRequest, bad, &f
		}
		renderApp(w, r, log, view, a, hooks, id, status, problems, form, nil, hooksSection{})
	})
}

// renderApp shows one app's page; hs says what the page says about its webhooks, whose
// list renderApp reads, and tests change what it says about its test numbers.
func renderApp(w http.ResponseWriter, r *http.Request, log *slog.Logger, view *adminView, a apps.AdminService, hooks events.AdminService,
	id string, status int, problems map[string]string, form *appForm, secret *apps.CreatedKey, hs hooksSection, tests ...func(*testsSection)) {
	info, err := a.GetApp(r.Context(), id)
	if err != nil {
		adminError(w, r, log, view, appNotFound(err))
		return
	}
	data := appPage{Info: info, ServiceSID: apps.ServiceSID(info.App.ID), Form: newAppForm(info.App), Problems: sortedProblems(problems), Secret: secret, TOTP: view.totpPage}
	list, err := a.TestNumbers(r.Context(), info.App.ID)
	if err != nil {
		adminError(w, r, log, view, appNotFound(err))
		return
	}
	now := time.Now()
	for _, t := range list {
		data.Tests.List = append(data.Tests.List, toAdminTestNumber(t, now))
	}
	data.Tests.Expires = now.UTC().AddDate(0, 1, 0).Format(testExpiryLayout)
	for _, f := range tests {
		f(&data.Tests)
	}
	if hooks != nil {
		if hs.Endpoints, err = hooks.Webhooks(r.Context(), info.App.ID); err != nil {
			adminError(w, r, log, view, webhookNotFound(err))
			return
		}
		if hs.Form.Types == nil {
			hs.Form = webhookForm{Types: map[string]bool{}}
		}
		hs.Types = events.Types()
		data.Hooks = &hs
	}
	if form != nil {
		data.Form = *form
	}
	view.render(w, r, status, "app", pageData{Title: "App " + info.App.Name, Nav: "apps", Data: data})
}

// handleAppDelete deletes an app and goes back to the list.
func handleAppDelete(log *slog.Logger, view *adminView, a apps.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.DeleteApp(r.Context(), chi.URLParam(r, "id"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, appNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/apps", http.StatusSeeOther)
	})
}
