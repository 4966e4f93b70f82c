package http

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/otp"
)

// historyPage is the data of history.html.
type historyPage struct {
	Form     historyForm
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
	Phone, IP, Status, From, To string
}

// handleHistoryPage lists sends newest first, filtered and paged like the API.
func handleHistoryPage(log *slog.Logger, view *adminView, h otp.HistoryStore, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f, problems := p.sendFilter(q)
		data := historyPage{Statuses: otp.HistoryStatuses(), Form: historyForm{
			Phone: f.Phone, IP: f.ClientIP, Status: f.Status, From: datetimeLocal(f.From), To: datetimeLocal(f.To),
		}}
		for name, dst := range map[string]*string{"phone": &data.Form.Phone, "ip": &data.Form.IP, "status": &data.Form.Status, "from": &data.Form.From, "to": &data.Form.To} {
			if _, bad := problems[name]; bad {
				*dst = q.Get(name)
			}
		}
		if len(problems) == 0 {
			rows, next, err := h.ListSends(r.Context(), f)
			if fields, ok := invalidFields(err); ok {
				problems = fields
			} else if err != nil {
				adminError(w, r, log, view, err)
				return
			}
			data.Rows, data.Phone = rows, f.Phone
			if f.Cursor != "" {
				first := f
				first.Cursor = ""
				data.First = "/admin/?" + filterQuery(first).Encode()
			}
			if next != "" {
				f.Cursor = next
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
func handleVerificationPage(log *slog.Logger, view *adminView, h otp.HistoryStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := h.VerificationDetail(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data := struct {
			otp.VerificationDetail
			LimitsURL string
		}{d, limitTarget{Kind: "phone", Key: d.Verification.Phone}.URL()}
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
func loadLimits(r *http.Request, a adminLimits, q url.Values, target func(url.Values) (limitTarget, map[string]string)) (limitsPage, error) {
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
	if t.Kind == "phone" {
		data.Phone = t.Key
	} else {
		data.IP = t.Key
	}
	var err error
	data.Rules, err = a.inspect(r.Context(), t)
	return data, err
}

// handleLimitsPage looks up the limiter state of a phone or IP, with recent admin actions.
func handleLimitsPage(log *slog.Logger, view *adminView, a adminLimits, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		data, err := loadLimits(r, a, q, p.target)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data.Reset = q.Get("reset") == "done" && data.Target.Kind != ""
		if data.Actions, err = a.history.AdminActions(r.Context(), adminActionsShown); err != nil {
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
func handleResetConfirm(log *slog.Logger, view *adminView, a adminLimits, p adminParams) http.Handler {
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
func handleResetLimits(log *slog.Logger, view *adminView, a adminLimits, p adminParams) http.Handler {
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
		if err := a.reset(r.Context(), t, actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, t.URL()+"&reset=done", http.StatusSeeOther)
	})
}

// handleChartsPage draws the last 24 hours by hour and the last 7 days by day.
func handleChartsPage(log *slog.Logger, view *adminView, h otp.HistoryStore, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		charts, err := statCharts(r.Context(), h, now())
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		view.render(w, r, http.StatusOK, "charts", pageData{Title: "Charts", Nav: "charts", Data: charts})
	})
}

// statCharts lays out the hours of the last 24 and the days of the last 7 from one
// hourly Stats call: it starts at the first day's midnight, and hours add up into
// days because both start at whole multiples since the Unix epoch.
func statCharts(ctx context.Context, h otp.HistoryStore, now time.Time) ([]chart, error) {
	const hour, day = time.Hour, 24 * time.Hour
	since := now.Add(-6 * day)
	hours, err := h.Stats(ctx, otp.BucketStart(since, day), hour)
	if err != nil {
		return nil, err
	}
	days, err := otp.NewStatCounter(since, now, day)
	if err != nil {
		return nil, err
	}
	for _, b := range hours {
		days.AddBucket(b)
	}
	return []chart{
		newChart("Last 24 hours, per hour", hours[max(len(hours)-24, 0):], hour),
		newChart("Last 7 days, per day", days.Buckets(), day),
	}, nil
}
