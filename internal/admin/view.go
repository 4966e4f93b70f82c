package admin

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/httpkit"
)

// adminFiles holds the console's templates and static files, so the binary serves
// them offline with nothing to install next to it.
//
//go:embed templates/*.html static/*
var adminFiles embed.FS

// adminView renders the console's pages from the embedded templates.
type adminView struct {
	log   *slog.Logger
	csrf  csrfGuard
	pages map[string]*template.Template
	// spendNav shows the Spend page in the menu: the server has one.
	spendNav bool
	// totpPage links each app's TOTP page from the app's page: the server has them.
	totpPage bool
}

// adminPageNames are the page templates; each defines "content" for layout.html.
func adminPageNames() []string {
	return []string{"history", "verification", "limits", "confirm", "charts", "delivery", "fraud", "error", "apps", "app", "webhook", "spend", "operators", "operator", "audit", "totp"}
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
		"why":         toAdminFraud,
		"cost":        costNote,
		"num":         func(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) },
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(adminFiles, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	v := &adminView{log: log, csrf: csrf, pages: map[string]*template.Template{}}
	for _, name := range adminPageNames() {
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(adminFiles, "templates/"+name+".html")
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
	// SpendNav shows the Spend entry of the menu.
	SpendNav bool
}

// render writes a page. It renders into a buffer first, so a template error is a
// clean 500 rather than half a page.
func (v *adminView) render(w http.ResponseWriter, r *http.Request, status int, page string, d pageData) {
	if actorFrom(r.Context()) != "" {
		d.CSRF = v.csrf.issue(w, r)
	}
	d.SpendNav = v.spendNav
	var buf bytes.Buffer
	if err := v.pages[page].ExecuteTemplate(&buf, "layout", d); err != nil {
		v.log.ErrorContext(r.Context(), "render admin page", "page", page, "request_id", httpkit.RequestIDFrom(r.Context()), "err", err)
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
		Status: status, Heading: http.StatusText(status), Message: message, RequestID: httpkit.RequestIDFrom(r.Context()),
	}})
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
	secs := httpkit.CeilSeconds(d)
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

// handleAdminStatic serves the embedded stylesheet; it holds no data.
func handleAdminStatic(log *slog.Logger, view *adminView) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "static/" + chi.URLParam(r, "*")
		if fi, err := fs.Stat(adminFiles, name); err != nil || fi.IsDir() {
			handleAdminNotFound(log, view).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		http.ServeFileFS(w, r, adminFiles, name)
	})
}
