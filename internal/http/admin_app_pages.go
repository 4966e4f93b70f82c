package http

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/events"
	"otpgate/internal/otp"
)

// appForm holds an app's settings as the console's form shows them.
type appForm struct {
	Name, Access, CodeLength, CodeTTL, MaxSends, MaxAttempts string
	Locales, Countries, Channels, SendRules, CheckRules      string
	WebOTPDomain, AndroidAppHash                             string
}

func newAppForm(a otp.App) appForm {
	return appForm{
		Name: a.Name, Access: string(a.Access), CodeLength: strconv.Itoa(a.CodeLength),
		CodeTTL: strconv.FormatInt(ceilSeconds(a.CodeTTL), 10), MaxSends: strconv.Itoa(a.MaxSends),
		MaxAttempts: strconv.Itoa(a.MaxAttempts), Locales: strings.Join(a.Locales, ","),
		Countries: strings.Join(a.AllowedCountries, ","), Channels: strings.Join(a.Channels, ","),
		SendRules: a.SendRules.String(), CheckRules: a.CheckRules.String(),
		WebOTPDomain: a.WebOTPDomain, AndroidAppHash: a.AndroidAppHash,
	}
}

// formOf keeps what was typed, for a form shown again with its problems.
func formOf(q url.Values) appForm {
	return appForm{
		Name: q.Get("name"), Access: q.Get("access"), CodeLength: q.Get("code_length"), CodeTTL: q.Get("code_ttl_seconds"),
		MaxSends: q.Get("max_sends"), MaxAttempts: q.Get("max_attempts"), Locales: q.Get("locales"),
		Countries: q.Get("allowed_countries"), Channels: q.Get("channels"), SendRules: q.Get("send_rules"), CheckRules: q.Get("check_rules"),
		WebOTPDomain: q.Get("webotp_domain"), AndroidAppHash: q.Get("android_app_hash"),
	}
}

// patchOf reads the form into a patch; empty fields are left as they are, and a
// number that is not one is named among the problems.
func patchOf(q url.Values) (otp.AppPatch, map[string]string) {
	var p appRequest
	problems := map[string]string{}
	text := func(name string) *string {
		if !q.Has(name) {
			return nil
		}
		v := strings.TrimSpace(q.Get(name))
		return &v
	}
	num := func(name string) *int {
		v := strings.TrimSpace(q.Get(name))
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			problems[name] = "must be a whole number"
			return nil
		}
		return &n
	}
	list := func(name string) *[]string {
		v := text(name)
		if v == nil {
			return nil
		}
		out := []string{}
		for _, s := range strings.Split(*v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return &out
	}
	p.Name, p.Access, p.SendRules, p.CheckRules = text("name"), text("access"), text("send_rules"), text("check_rules")
	p.CodeLength, p.CodeTTLSeconds, p.MaxSends, p.MaxAttempts = num("code_length"), num("code_ttl_seconds"), num("max_sends"), num("max_attempts")
	p.Locales, p.AllowedCountries, p.Channels = list("locales"), list("allowed_countries"), list("channels")
	p.WebOTPDomain, p.AndroidAppHash = text("webotp_domain"), text("android_app_hash")
	return p.patch(), problems
}

// appsPage is the data of apps.html.
type appsPage struct {
	Apps     []otp.AppInfo
	Form     appForm
	Problems []fieldProblem
}

// appPage is the data of app.html.
type appPage struct {
	Info       otp.AppInfo
	ServiceSID string
	Form       appForm
	Problems   []fieldProblem
	// Secret is the key just made, shown once.
	Secret *otp.CreatedKey
	// Hooks are the app's webhook endpoints and what the page says about them; nil when
	// the console has no webhooks.
	Hooks *hooksSection
}

// liveKeys counts the keys that are not revoked.
func liveKeys(keys []otp.AppKey) int {
	n := 0
	for _, k := range keys {
		if !k.Revoked() {
			n++
		}
	}
	return n
}

// handleAppsPage lists the apps with a form for a new one (GET), or creates it (POST).
func handleAppsPage(log *slog.Logger, view *adminView, a otp.AppAdmin) http.Handler {
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
func handleAppPage(log *slog.Logger, view *adminView, a otp.AppAdmin, hooks events.AdminService) http.Handler {
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
// list renderApp reads.
func renderApp(w http.ResponseWriter, r *http.Request, log *slog.Logger, view *adminView, a otp.AppAdmin, hooks events.AdminService,
	id string, status int, problems map[string]string, form *appForm, secret *otp.CreatedKey, hs hooksSection) {
	info, err := a.GetApp(r.Context(), id)
	if err != nil {
		adminError(w, r, log, view, appNotFound(err))
		return
	}
	data := appPage{Info: info, ServiceSID: otp.ServiceSID(info.App.ID), Form: newAppForm(info.App), Problems: sortedProblems(problems), Secret: secret}
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

// handleAppKeyPage makes a key and shows its secret on the app's page, once: the
// answer is not a redirect, so the secret is in no URL and no later page.
func handleAppKeyPage(log *slog.Logger, view *adminView, a otp.AppAdmin, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		k, err := a.CreateKey(ctx, id, otp.NewKey{Name: r.PostForm.Get("name"), TrustedClientIP: r.PostForm.Get("trusted_client_ip") == "true"}, actorFrom(ctx))
		var invalid *otp.ErrInvalidRequest
		switch {
		case errors.As(err, &invalid):
			renderApp(w, r, log, view, a, hooks, id, http.StatusBadRequest, invalid.Fields, nil, nil, hooksSection{})
		case err != nil:
			adminError(w, r, log, view, appNotFound(err))
		default:
			renderApp(w, r, log, view, a, hooks, id, http.StatusCreated, nil, nil, &k, hooksSection{})
		}
	})
}

// handleAppKeyRevoke revokes a key and goes back to the app's page.
func handleAppKeyRevoke(log *slog.Logger, view *adminView, a otp.AppAdmin) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		if err := a.RevokeKey(r.Context(), id, chi.URLParam(r, "key_id"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, appNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/apps/"+id, http.StatusSeeOther)
	})
}

// handleAppDelete deletes an app and goes back to the list.
func handleAppDelete(log *slog.Logger, view *adminView, a otp.AppAdmin) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.DeleteApp(r.Context(), chi.URLParam(r, "id"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, appNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/apps", http.StatusSeeOther)
	})
}
