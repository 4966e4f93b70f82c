package http

import (
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/otp"
)

// historyPage is the data of history.html.
type historyPage struct {
	Form historyForm
	// Apps fill the app filter; nil hides it.
	Apps     []otp.AppInfo
	Statuses []string
	Problems []fieldProblem
	Rows     []otp.SendRow
	// Phone is the normalised phone filter, for a link to its limits.
	Phone string
	// First and Next link to the newest page and the next page, filters kept.
	First, Next string
}

// historyForm holds the filter inputs: normalised when valid, as typed when not.
type historyForm struct {
	App, Phone, IP, Status, From, To string
}

// handleHistoryPage lists sends newest first, filtered and paged like the API.
func handleHistoryPage(log *slog.Logger, view *adminView, a otp.AdminService, apps otp.AppAdmin, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f, problems := p.sendFilter(q)
		data := historyPage{Statuses: otp.HistoryStatuses(), Form: historyForm{
			App: f.AppID, Phone: f.Phone, IP: f.ClientIP, Status: f.Status, From: datetimeLocal(f.From), To: datetimeLocal(f.To),
		}}
		for name, dst := range map[string]*string{"phone": &data.Form.Phone, "ip": &data.Form.IP, "status": &data.Form.Status, "from": &data.Form.From, "to": &data.Form.To} {
			if _, bad := problems[name]; bad {
				*dst = q.Get(name)
			}
		}
		if apps != nil {
			var err error
			if data.Apps, err = apps.ListApps(r.Context()); err != nil {
				adminError(w, r, log, view, err)
				return
			}
		}
		if len(problems) == 0 {
			rows, next, err := a.ListSends(r.Context(), f)
			if fields, ok := invalidFields(err); ok {
				problems = fields
			} else if err != nil {
				adminError(w, r, log, view, err)
				return
			}
			data.Rows = rows
			if !otp.IsEmailAddress(f.Phone) {
				data.Phone = f.Phone // an address has no limits page
			}
			if f.After != nil {
				first := f
				first.After = nil
				data.First = "/admin/?" + filterQuery(first).Encode()
			}
			if next != nil {
				f.After = next
				data.Next = "/admin/?" + filterQuery(f).Encode()
			}
		}
		status := http.StatusOK
		if len(problems) > 0 {
			status, data.Problems = http.StatusBadRequest, sortedProblems(problems)
		}
		view.render(w, r, status, "history", pageData{Title: "Send history", Nav: "history", Data: data})
	})
}

// handleVerificationPage shows one verification: every send and every check attempt.
func handleVerificationPage(log *slog.Logger, view *adminView, a otp.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := a.VerificationDetail(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data := struct {
			otp.VerificationDetail
			LimitsURL string
		}{d, limitTarget{otp.LimitTarget{Kind: otp.TargetPhone, Key: d.Verification.Phone}}.URL()}
		view.render(w, r, http.StatusOK, "verification", pageData{Title: "Verification", Nav: "history", Data: data})
	})
}

// limitsPage is the data of limits.html and confirm.html.
type limitsPage struct {
	Phone, IP string
	Problems  []fieldProblem
	Target    limitTarget
	Rules     []otp.RuleState
	// Reset is set right after a reset of Target.
	Reset   bool
	Actions []otp.AdminAction
}

// loadLimits reads the target of q with target (adminParams.target or requiredTarget)
// and, when there is one, its limiter state.
func loadLimits(r *http.Request, a otp.AdminService, q url.Values, target func(url.Values) (limitTarget, map[string]string)) (limitsPage, error) {
	data := limitsPage{Phone: q.Get("phone"), IP: q.Get("ip")}
	t, problems := target(q)
	if len(problems) > 0 {
		data.Problems = sortedProblems(problems)
		return data, nil
	}
	data.Target = t
	if t.Kind == "" {
		return data, nil
	}
	if t.Kind == otp.TargetPhone {
		data.Phone = t.Key
	} else {
		data.IP = t.Key
	}
	var err error
	data.Rules, err = a.Limits(r.Context(), t.LimitTarget)
	return data, err
}

// handleLimitsPage looks up the limiter state of a phone or IP, with recent admin actions.
func handleLimitsPage(log *slog.Logger, view *adminView, a otp.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		data, err := loadLimits(r, a, q, p.target)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data.Reset = q.Get("reset") == "done" && data.Target.Kind != ""
		if data.Actions, err = a.AdminActions(r.Context(), adminActionsShown); err != nil {
			adminError(w, r, log, view, err)
			return
		}
		status := http.StatusOK
		if len(data.Problems) > 0 {
			status = http.StatusBadRequest
		}
		view.render(w, r, status, "limits", pageData{Title: "Limits", Nav: "limits", Data: data})
	})
}

// handleResetConfirm asks before a reset; its form POSTs with the CSRF token, so the
// reset needs no script and cannot be triggered by a link.
func handleResetConfirm(log *slog.Logger, view *adminView, a otp.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := loadLimits(r, a, r.URL.Query(), p.requiredTarget)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		if len(data.Problems) > 0 {
			view.render(w, r, http.StatusBadRequest, "limits", pageData{Title: "Limits", Nav: "limits", Data: data})
			return
		}
		view.render(w, r, http.StatusOK, "confirm", pageData{Title: "Reset limits", Nav: "limits", Data: data})
	})
}

// handleResetLimits resets a phone's or IP's limits and shows the cleared state
// (post, redirect, get, so reloading the page does not reset again).
func handleResetLimits(log *slog.Logger, view *adminView, a otp.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		t, problems := p.requiredTarget(r.PostForm)
		if len(problems) > 0 {
			adminError(w, r, log, view, invalidParams(problems))
			return
		}
		if err := a.ResetLimits(r.Context(), t.LimitTarget, actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, t.URL()+"&reset=done", http.StatusSeeOther)
	})
}

// handleChartsPage draws the last 24 hours by hour and the last 7 days by day.
func handleChartsPage(log *slog.Logger, view *adminView, a otp.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hours, days, err := a.Charts(r.Context())
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		charts := []chart{
			newChart("Last 24 hours, per hour", hours, time.Hour),
			newChart("Last 7 days, per day", days, 24*time.Hour),
		}
		view.render(w, r, http.StatusOK, "charts", pageData{Title: "Charts", Nav: "charts", Data: charts})
	})
}
