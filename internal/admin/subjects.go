package admin

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/history"
	"otpgate/internal/httpkit"
	"otpgate/internal/pii"
)

// Erasure erases one person's data by phone number or email address; *history.Eraser
// implements it.
type Erasure interface {
	// Erase removes everything kept of address and audits it; see history.Eraser.Erase.
	Erase(ctx context.Context, address, actor string) (history.Erased, error)
}

// erasedResponse is DELETE /admin/api/subjects/{subject}: what was removed, per kind. The
// subject is named by its mask only, so that the answer, like the audit log, can be kept.
type erasedResponse struct {
	Subject string       `json:"subject"`
	Removed erasedCounts `json:"removed"`
}

type erasedCounts struct {
	Verifications int `json:"verifications"`
	Sends         int `json:"sends"`
	Attempts      int `json:"attempts"`
	Events        int `json:"events"`
	AuditEntries  int `json:"audit_entries"`
	FraudBlocks   int `json:"fraud_blocks"`
	LimiterKeys   int `json:"limiter_keys"`
	Replays       int `json:"stored_responses"`
}

// handleAdminEraseSubject erases one person's data: the subject is an E.164 number (its +
// written as is or as %2B) or an email address; anything else is a 400 and erases nothing.
func handleAdminEraseSubject(log *slog.Logger, e Erasure) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := url.PathUnescape(chi.URLParam(r, "subject"))
		if err != nil {
			raw = ""
		}
		address, err := history.ParseSubject(raw)
		if err != nil {
			writeAdminProblem(w, r, log, invalidRequest("invalid subject", map[string]string{"subject": err.Error()}))
			return
		}
		got, err := e.Erase(r.Context(), address, actorFrom(r.Context()))
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, erasedResponse{Subject: pii.Mask(address), Removed: erasedCounts{
			Verifications: got.Verifications, Sends: got.Sends, Attempts: got.Attempts, Events: got.Events,
			AuditEntries: got.AuditEntries, FraudBlocks: got.FraudBlocks, LimiterKeys: got.LimiterKeys, Replays: got.Replays,
		}})
	})
}
