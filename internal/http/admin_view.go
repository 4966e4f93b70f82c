package http

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// adminView renders the console's pages from the embedded templates.
type adminView struct {
	log   *slog.Logger
	csrf  csrfGuard
	pages map[string]*template.Template
}

// adminPageNames are the page templates; each defines "content" for layout.html.
func adminPageNames() []string {
	return []string{"history", "verification", "limits", "confirm", "charts", "delivery", "fraud", "error", "apps", "app", "webhook"}
}

func newAdminView(log *slog.Logger, csrf csrfGuard) (*adminView, error) {
	funcs := template.FuncMap{
		"utc":         formatUTC,
		"iso":         func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"dur":         formatSpan,
		"statusClass": statusClass,
		"statusLabel": statusLabel,
		"liveKeys":    liveKeys,
		"percent":     func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
		"seconds":     func(s int64) time.Duration { return time.Duration(s) * time.Second },
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(adminFiles, "admin/templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	v := &adminView{log: log, csrf: csrf, pages: map[string]*template.Template{}}
	for _, name := range adminPageNames() {
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(adminFiles, "admin/templates/"+name+".html")
		}
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		v.pages[name] = t
	}
	return v, nil
}

// pageData is what every page's template gets; Data is the page's own.
type pageData struct {
	Title string
	// Nav names the active menu entry.
	Nav string
	// CSRF is the token forms must send back; empty before login.
	CSRF string
	Data any
}

// render writes a page. It renders into a buffer first, so a template error is a
// clean 500 rather than half a page.
func (v *adminView) render(w http.ResponseWriter, r *http.Request, status int, page string, d pageData) {
	if actorFrom(r.Context()) != "" {
		d.CSRF = v.csrf.issue(w, r)
	}
	var buf bytes.Buffer
	if err := v.pages[page].ExecuteTemplate(&buf, "layout", d); err != nil {
		v.log.ErrorContext(r.Context(), "render admin page", "page", page, "request_id", requestIDFrom(r.Context()), "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// errorPage is the data of error.html.
type errorPage struct {
	Status    int
	Heading   string
	Message   string
	Problems  []fieldProblem
	RequestID string
}

// fieldProblem is one bad form field or query parameter, shown next to the form.
type fieldProblem struct {
	Name, Problem string
}

// sortedProblems lists problems by field name.
func sortedProblems(m map[string]string) []fieldProblem {
	out := make([]fieldProblem, 0, len(m))
	for k, v := range m {
		out = append(out, fieldProblem{k, v})
	}
	slices.SortFunc(out, func(a, b fieldProblem) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// fail renders the error page.
func (v *adminView) fail(w http.ResponseWriter, r *http.Request, status int, message string) {
	v.render(w, r, status, "error", pageData{Title: http.StatusText(status), Data: errorPage{
		Status: status, Heading: http.StatusText(status), Message: message, RequestID: requestIDFrom(r.Context()),
	}})
}

// adminError answers err as problem+json for the API and as an error page for the
// console, logging it as every problem is logged.
func adminError(w http.ResponseWriter, r *http.Request, log *slog.Logger, view *adminView, err error) {
	p := adminProblemFor(err)
	if isAdminAPI(r) {
		sendProblem(w, r, log, p, err)
		return
	}
	ctx := r.Context()
	logProblem(ctx, log, err)
	page := errorPage{Status: p.Status, Heading: p.Title, Message: p.Detail, RequestID: requestIDFrom(ctx)}
	switch p.Status {
	case http.StatusUnauthorized:
		page.Message = "Log in with any user name and the admin token (ADMIN_TOKEN) as the password."
	case http.StatusForbidden:
		page.Message = "This form is out of date or was sent from another site. Go back, reload the page and try again."
	case http.StatusBadRequest:
		page.Message = "Some values are not valid."
		page.Problems = sortedProblems(p.Errors)
	case http.StatusServiceUnavailable:
		page.Message = "Redis or PostgreSQL did not answer in time. Try again in a moment."
	case http.StatusInternalServerError:
		page.Message = "Something went wrong. The request id below is in the server log."
	}
	view.render(w, r, p.Status, "error", pageData{Title: p.Title, Data: page})
}

// invalidFields returns the field problems of a store's *otp.ErrInvalidRequest.
func invalidFields(err error) (map[string]string, bool) {
	var invalid *otp.ErrInvalidRequest
	if errors.As(err, &invalid) {
		return invalid.Fields, true
	}
	return nil, false
}

// formatUTC shows a time to the second, in UTC; a zero time as a dash.
func formatUTC(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// formatSpan shows a wait such as "42s" or "1h 05m"; zero as "now".
func formatSpan(d time.Duration) string {
	secs := ceilSeconds(d)
	switch {
	case secs <= 0:
		return "now"
	case secs < 60:
		return fmt.Sprintf("%ds", secs)
	case secs < 3600:
		return fmt.Sprintf("%dm %02ds", secs/60, secs%60)
	default:
		return fmt.Sprintf("%dh %02dm", secs/3600, secs%3600/60)
	}
}

// statusClass names the CSS class of a history status.
func statusClass(status string) string { return "st-" + status }

// datetimeLocal renders a time as a datetime-local input's value, in UTC.
func datetimeLocal(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}
