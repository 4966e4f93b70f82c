package admin

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/fraud"
	"otpgate/internal/httpkit"
)

// fraudBlock is one block as the API shows it.
type fraudBlock struct {
	ID     string `json:"id"`
	Scope  string `json:"scope"`
	Target string `json:"target"`
	// Mode is enforce, or shadow for a block that only reported.
	Mode      string    `json:"mode"`
	Reason    string    `json:"reason"`
	StartedAt time.Time `json:"started_at"`
	EndsAt    time.Time `json:"ends_at"`
	Active    bool      `json:"active"`
	// RetryAfterSeconds is how long an active block still lasts; 0 otherwise.
	RetryAfterSeconds int64      `json:"retry_after_seconds"`
	LiftedAt          *time.Time `json:"lifted_at,omitempty"`
	LiftedBy          string     `json:"lifted_by,omitempty"`
	// Why is the trip's explanation; absent for blocks from before explanations.
	Why *adminFraud `json:"why,omitempty"`
}

func toFraudBlock(b fraud.Block, now time.Time) fraudBlock {
	out := fraudBlock{ID: b.ID, Scope: b.Scope, Target: b.Target, Mode: string(b.Mode), Reason: b.Reason,
		StartedAt: b.StartedAt, EndsAt: b.EndsAt, Active: b.Active(now), LiftedBy: b.LiftedBy, Why: toAdminFraud(b.Why)}
	if out.Active {
		out.RetryAfterSeconds = httpkit.CeilSeconds(b.EndsAt.Sub(now))
	}
	if !b.LiftedAt.IsZero() {
		out.LiftedAt = &b.LiftedAt
	}
	return out
}

// handleFraudBlocks lists the active blocks, or with all=true every block.
func handleFraudBlocks(log *slog.Logger, f fraud.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		all, err := strconv.ParseBool(or(r.URL.Query().Get("all"), "false"))
		if err != nil {
			writeAdminProblem(w, r, log, invalidParams(map[string]string{"all": "must be true or false"}))
			return
		}
		blocks, err := f.Blocks(r.Context(), all)
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		now := p.now()
		out := struct {
			Blocks []fraudBlock `json:"blocks"`
		}{Blocks: make([]fraudBlock, len(blocks))}
		for i, b := range blocks {
			out.Blocks[i] = toFraudBlock(b, now)
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// handleFraudBlock lifts one block and answers it.
func handleFraudBlock(log *slog.Logger, f fraud.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := f.LiftBlock(r.Context(), chi.URLParam(r, "id"), actorFrom(r.Context()))
		if err != nil {
			writeFraudProblem(w, r, log, err, "there is no such block")
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toFraudBlock(b, p.now()))
	})
}

// fraudConversionRow is one country's or prefix's line.
type fraudConversionRow struct {
	Key       string  `json:"key"`
	Country   string  `json:"country,omitempty"`
	Prefix    string  `json:"prefix,omitempty"`
	Sends     int     `json:"sends"`
	Approvals int     `json:"approvals"`
	Blocked   int     `json:"blocked"`
	Ratio     float64 `json:"ratio"`
}

// fraudConversion reads by (country or prefix; default country) and since (default 24h).
func fraudConversion(p adminParams, q map[string][]string) (fraud.ConversionBy, time.Time, map[string]string) {
	by := fraud.ConversionBy(or(strings.TrimSpace(first(q["by"])), string(fraud.ByCountry)))
	since, _, _, problems := p.statsRange(map[string][]string{"since": q["since"]})
	if by != fraud.ByCountry && by != fraud.ByPrefix {
		problems["by"] = `must be "country" or "prefix"`
	}
	return by, since, problems
}

// handleFraudConversion counts sends, approvals and blocks per country or prefix.
func handleFraudConversion(log *slog.Logger, f fraud.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		by, since, problems := fraudConversion(p, r.URL.Query())
		if len(problems) > 0 {
			writeAdminProblem(w, r, log, invalidParams(problems))
			return
		}
		rows, err := f.Conversion(r.Context(), by, since)
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		out := struct {
			By    string               `json:"by"`
			Since time.Time            `json:"since"`
			Rows  []fraudConversionRow `json:"rows"`
		}{By: string(by), Since: since, Rows: make([]fraudConversionRow, len(rows))}
		for i, c := range rows {
			row := fraudConversionRow{Key: c.Key, Sends: c.Sends, Approvals: c.Approvals, Blocked: c.Blocked, Ratio: c.Ratio}
			if by == fraud.ByCountry {
				row.Country = c.Key
			} else {
				row.Prefix = c.Key
			}
			out.Rows[i] = row
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// handleFraudLiftForm lifts a block.
func handleFraudLiftForm(log *slog.Logger, view *adminView, f fraud.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := f.LiftBlock(r.Context(), chi.URLParam(r, "id"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, "/admin/fraud?done=lifted#blocks", http.StatusSeeOther)
	})
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
