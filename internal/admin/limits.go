package admin

import (
	"log/slog"
	"net/http"
	"net/url"

	"otpgate/internal/history"
	"otpgate/internal/httpkit"
	"otpgate/internal/rate"
)

// limitsPage is the data of limits.html and confirm.html.
type limitsPage struct {
	Phone, IP string
	Problems  []fieldProblem
	Target    limitTarget
	Rules     []rate.RuleState
	// Reset is set right after a reset of Target.
	Reset   bool
	Actions []history.AdminAction
}

// loadLimits reads the target of q with target (adminParams.target or requiredTarget)
// and, when there is one, its limiter state.
func loadLimits(r *http.Request, a history.AdminService, q url.Values, target func(url.Values) (limitTarget, map[string]string)) (limitsPage, error) {
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
	if t.Kind == history.TargetPhone {
		data.Phone = t.Key
	} else {
		data.IP = t.Key
	}
	var err error
	data.Rules, err = a.Limits(r.Context(), t.LimitTarget)
	return data, err
}

// handleLimitsPage looks up the limiter state of a phone or IP, with recent admin actions.
func handleLimitsPage(log *slog.Logger, view *adminView, a history.AdminService, p adminParams) http.Handler {
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
func handleResetConfirm(log *slog.Logger, view *adminView, a history.AdminService, p adminParams) http.Handler {
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
func handleResetLimits(log *slog.Logger, view *adminView, a history.AdminService, p adminParams) http.Handler {
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

// limitsResponse is GET and DELETE /admin/api/limits: the state of every configured
// rule of a phone's or IP's scopes (after the reset, for DELETE).
type limitsResponse struct {
	Target string       `json:"target"`
	Kind   string       `json:"kind"`
	Key    string       `json:"key"`
	Rules  []adminLimit `json:"rules"`
}

type adminLimit struct {
	Scope             string `json:"scope"`
	Key               string `json:"key"`
	Rule              string `json:"rule"`
	Limit             int    `json:"limit"`
	WindowSeconds     int64  `json:"window_seconds"`
	Used              int    `json:"used"`
	Remaining         int    `json:"remaining"`
	ResetAfterSeconds int64  `json:"reset_after_seconds"`
	RetryAfterSeconds int64  `json:"retry_after_seconds"`
}

func toLimitsResponse(t limitTarget, states []rate.RuleState) limitsResponse {
	out := limitsResponse{Target: t.String(), Kind: t.Kind, Key: t.Key, Rules: make([]adminLimit, len(states))}
	for i, s := range states {
		out.Rules[i] = adminLimit{
			Scope: s.Scope, Key: s.Key, Rule: s.Rule.String(), Limit: s.Rule.Limit,
			WindowSeconds: httpkit.CeilSeconds(s.Rule.Window), Used: s.Used, Remaining: s.Remaining,
			ResetAfterSeconds: httpkit.CeilSeconds(s.ResetAfter), RetryAfterSeconds: httpkit.CeilSeconds(s.RetryAfter),
		}
	}
	return out
}

// handleAdminLimits reports the limiter state of phone= or ip= (GET) or resets it
// and reports the state after the reset (DELETE).
func handleAdminLimits(log *slog.Logger, a history.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, problems := p.requiredTarget(r.URL.Query())
		if len(problems) > 0 {
			writeAdminProblem(w, r, log, invalidParams(problems))
			return
		}
		if r.Method == http.MethodDelete {
			if err := a.ResetLimits(r.Context(), t.LimitTarget, actorFrom(r.Context())); err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
		}
		states, err := a.Limits(r.Context(), t.LimitTarget)
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toLimitsResponse(t, states))
	})
}

// limitTarget is a history.LimitTarget with the links the console makes to it.
type limitTarget struct {
	history.LimitTarget
}

// Query is the target as URL query.
func (t limitTarget) Query() string { return url.Values{t.Kind: {t.Key}}.Encode() }

// URL links to the target's limits page.
func (t limitTarget) URL() string { return "/admin/limits?" + t.Query() }
