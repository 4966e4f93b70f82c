package admin

import (
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/httpkit"
)

// adminAuditEntry is one audit entry as the admin API shows it.
type adminAuditEntry struct {
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	Detail    string    `json:"detail"`
	ActorKind string    `json:"actor_kind"`
	Actor     string    `json:"actor"`
	ActorID   string    `json:"actor_id"`
	TokenID   string    `json:"token_id"`
	ClientIP  string    `json:"client_ip"`
	Before    string    `json:"before"`
	After     string    `json:"after"`
}

func toAdminAuditEntry(a history.AdminAction) adminAuditEntry {
	return adminAuditEntry{ID: a.ID, Time: a.Time, Action: a.Action, Target: a.Target, Detail: a.Detail, ActorKind: a.ActorKind,
		Actor: a.Actor, ActorID: a.ActorID, TokenID: a.TokenID, ClientIP: a.ClientIP, Before: a.Before, After: a.After}
}

// auditResponse is GET /admin/api/audit.
type auditResponse struct {
	Entries []adminAuditEntry `json:"entries"`
	// NextBeforeID pages on: pass it as before_id with the same filters; null on the last page.
	NextBeforeID *int64 `json:"next_before_id"`
}

// auditFilter reads actor, action, from, to, limit and before_id.
func auditFilter(q url.Values) (history.AuditFilter, map[string]string) {
	f := history.AuditFilter{Actor: q.Get("actor"), Action: q.Get("action"), Limit: 50}
	problems := map[string]string{}
	for name, dst := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if v := q.Get(name); v != "" {
			t, err := parseAdminTime(v)
			if err != nil {
				problems[name] = err.Error()
			}
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > history.MaxListLimit {
			problems["limit"] = "must be a whole number from 1 to " + strconv.Itoa(history.MaxListLimit)
		}
		f.Limit = n
	}
	if v := q.Get("before_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			problems["before_id"] = "must be a positive whole number"
		}
		f.BeforeID = n
	}
	return f, problems
}

// readAudit answers a filter with one page of entries and the id to page on from.
func readAudit(r *http.Request, a history.AdminService, f history.AuditFilter) ([]history.AdminAction, *int64, error) {
	entries, err := a.AuditLog(r.Context(), f)
	if err != nil {
		return nil, nil, err
	}
	var next *int64
	if len(entries) == history.AdminActionLimit(f.Limit) && len(entries) > 0 {
		id := entries[len(entries)-1].ID
		next = &id
	}
	return entries, next, nil
}

// handleAdminAudit serves GET /admin/api/audit.
func handleAdminAudit(log *slog.Logger, a history.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, problems := auditFilter(r.URL.Query())
		if len(problems) > 0 {
			writeAdminProblem(w, r, log, invalidParams(problems))
			return
		}
		entries, next, err := readAudit(r, a, f)
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		out := auditResponse{Entries: make([]adminAuditEntry, len(entries)), NextBeforeID: next}
		for i, e := range entries {
			out.Entries[i] = toAdminAuditEntry(e)
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// auditPage is the data of audit.html.
type auditPage struct {
	Entries  []history.AdminAction
	Filter   url.Values
	Problems []fieldProblem
	// Next is the query of the next page; empty on the last.
	Next string
}

// handleAuditPage shows the audit log with the API's filters.
func handleAuditPage(log *slog.Logger, view *adminView, a history.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f, problems := auditFilter(q)
		data := auditPage{Filter: q}
		status := http.StatusOK
		if len(problems) > 0 {
			data.Problems, status = sortedProblems(problems), http.StatusBadRequest
		} else {
			entries, next, err := readAudit(r, a, f)
			if err != nil {
				adminError(w, r, log, view, err)
				return
			}
			data.Entries = entries
			if next != nil {
				nq := url.Values{}
				for k, v := range q {
					nq[k] = v
				}
				nq.Set("before_id", strconv.FormatInt(*next, 10))
				data.Next = nq.Encode()
			}
		}
		view.render(w, r, status, "audit", pageData{Title: "Audit", Nav: "audit", Data: data})
	})
}
