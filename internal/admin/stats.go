package admin

import (
	"log/slog"
	"net/http"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/httpkit"
)

// statsResponse is GET /admin/api/stats.
type statsResponse struct {
	BucketSeconds int64         `json:"bucket_seconds"`
	Buckets       []statsBucket `json:"buckets"`
}

type statsBucket struct {
	Start      time.Time      `json:"start"`
	Sends      int            `json:"sends"`
	Failed     int            `json:"failed"`
	Blocked    map[string]int `json:"blocked"`
	Duplicates int            `json:"duplicates"`
	Approvals  int            `json:"approvals"`
	// ApprovalRatio is approvals / sends; 0 without sends.
	ApprovalRatio float64 `json:"approval_ratio"`
}

// handleAdminStats counts sends, blocks by reason and approvals per bucket.
func handleAdminStats(log *slog.Logger, a history.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		since, bucket, app, problems := p.statsRange(r.URL.Query())
		if len(problems) > 0 {
			writeAdminProblem(w, r, log, invalidParams(problems))
			return
		}
		buckets, err := a.Stats(r.Context(), since, bucket, app)
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		out := statsResponse{BucketSeconds: httpkit.CeilSeconds(bucket), Buckets: make([]statsBucket, len(buckets))}
		for i, b := range buckets {
			out.Buckets[i] = statsBucket{Start: b.Start, Sends: b.Sends, Failed: b.Failed, Blocked: b.Blocked,
				Duplicates: b.Duplicates, Approvals: b.Approvals, ApprovalRatio: b.ApprovalRatio}
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// handleChartsPage draws the last 24 hours by hour and the last 7 days by day.
func handleChartsPage(log *slog.Logger, view *adminView, a history.AdminService) http.Handler {
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
