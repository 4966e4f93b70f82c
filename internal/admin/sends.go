package admin

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/contact"
	"otpgate/internal/history"
	"otpgate/internal/httpkit"
	"otpgate/internal/spend"
)

// adminSend is one send as the admin API shows it. It never holds a code or code hash.
type adminSend struct {
	ID             string    `json:"id"`
	AppID          string    `json:"app_id"`
	VerificationID string    `json:"verification_id,omitempty"`
	Time           time.Time `json:"time"`
	Phone          string    `json:"phone"`
	ClientIP       string    `json:"client_ip"`
	// Status is the label for people: sent, failed, blocked:<rule>, duplicate, approved, expired, sending, unknown.
	Status string `json:"status"`
	// SendStatus is the row's own state: sending, sent, failed, blocked, duplicate or unknown.
	SendStatus string `json:"send_status"`
	Reason     string `json:"reason,omitempty"`
	// Shadow names what shadow fraud rules would have refused, such as "prefix 10/1h:shadow".
	Shadow string `json:"shadow,omitempty"`
	// Fraud says why the fraud guard refused, challenged, passed or flagged the send.
	Fraud *adminFraud `json:"fraud,omitempty"`
	// Test marks a send to a test number of its app.
	Test              bool      `json:"test,omitempty"`
	Provider          string    `json:"provider,omitempty"`
	ProviderMessageID string    `json:"provider_message_id,omitempty"`
	Error             string    `json:"error,omitempty"`
	UpdatedAt         time.Time `json:"updated_at"`
	// Channel is sms, whatsapp, voice or email; Country the number's region.
	Channel string `json:"channel"`
	Country string `json:"country,omitempty"`
	// Encoding and Segments describe an SMS.
	Encoding string `json:"encoding,omitempty"`
	Segments int    `json:"segments,omitempty"`
	// Attempts are the provider attempts, in order.
	Attempts []adminProviderAttempt `json:"attempts"`
	// Delivery is what the provider's receipt said, with its error and time.
	Delivery      string     `json:"delivery,omitempty"`
	DeliveryError string     `json:"delivery_error,omitempty"`
	DeliveredAt   *time.Time `json:"delivered_at,omitempty"`
	// Cost is the estimated cost in Currency, the price table's; ActualCost what the
	// provider reported in ActualCurrency, its own. Decimal text, absent when unknown.
	Cost           string `json:"cost,omitempty"`
	Currency       string `json:"currency,omitempty"`
	ActualCost     string `json:"actual_cost,omitempty"`
	ActualCurrency string `json:"actual_currency,omitempty"`
}

// costNote is what a send cost for the history's Message column: the estimate and, once
// a receipt reported it, what the provider billed; "" for a send never priced.
func costNote(r history.SendRow) string {
	var parts []string
	if r.Currency != "" {
		parts = append(parts, "est. "+spend.FormatAmount(r.Cost)+" "+r.Currency)
	}
	if r.ActualCurrency != "" {
		parts = append(parts, "billed "+spend.FormatAmount(r.ActualCost)+" "+r.ActualCurrency)
	}
	return strings.Join(parts, " · ")
}

// adminProviderAttempt is one provider's try at a send.
type adminProviderAttempt struct {
	Provider   string    `json:"provider"`
	Outcome    string    `json:"outcome"`
	ProviderID string    `json:"provider_id,omitempty"`
	Error      string    `json:"error,omitempty"`
	Start      time.Time `json:"start"`
	DurationMS float64   `json:"duration_ms"`
}

func toAdminSend(r history.SendRow) adminSend {
	out := adminSend{
		ID: r.ID, AppID: r.AppID, VerificationID: r.VerificationID, Time: r.Time, Phone: r.Phone, ClientIP: r.ClientIP,
		Status: statusLabel(r), SendStatus: string(r.SendStatus), Reason: r.Reason, Shadow: r.Shadow,
		Fraud: toAdminFraud(r.Fraud), Test: r.Test, Provider: r.Provider,
		ProviderMessageID: r.ProviderMessageID, Error: r.Error, UpdatedAt: r.Updated,
		Channel: r.Channel, Country: r.Country, Encoding: r.Encoding, Segments: r.Segments,
		Attempts: make([]adminProviderAttempt, len(r.Attempts)),
		Delivery: r.Delivery, DeliveryError: r.DeliveryError, DeliveredAt: timeOrNil(r.DeliveredAt),
	}
	if r.Currency != "" {
		out.Cost, out.Currency = spend.FormatAmount(r.Cost), r.Currency
	}
	if r.ActualCurrency != "" {
		out.ActualCost, out.ActualCurrency = spend.FormatAmount(r.ActualCost), r.ActualCurrency
	}
	for i, a := range r.Attempts {
		out.Attempts[i] = adminProviderAttempt{Provider: a.Provider, Outcome: string(a.Outcome), ProviderID: a.ProviderID,
			Error: a.Error, Start: a.Start, DurationMS: float64(a.Duration.Microseconds()) / 1000}
	}
	return out
}

// sendsResponse is one page of GET /admin/api/sends; NextCursor is "" on the last page.
type sendsResponse struct {
	Sends      []adminSend `json:"sends"`
	NextCursor string      `json:"next_cursor"`
}

// verificationResponse is GET /admin/api/verifications/{id}: everything that happened
// to one verification, oldest first, without its code hashes.
type verificationResponse struct {
	Verification adminVerification `json:"verification"`
	Sends        []adminSend       `json:"sends"`
	Attempts     []adminAttempt    `json:"attempts"`
}

type adminVerification struct {
	ID           string     `json:"id"`
	Phone        string     `json:"phone"`
	Channel      string     `json:"channel"`
	Locale       string     `json:"locale"`
	Status       string     `json:"status"`
	Sends        int        `json:"sends"`
	Attempts     int        `json:"attempts"`
	MaxAttempts  int        `json:"max_attempts"`
	AttemptsLeft int        `json:"attempts_left"`
	ClientIP     string     `json:"client_ip"`
	CreatedAt    time.Time  `json:"created_at"`
	ExpiresAt    time.Time  `json:"expires_at"`
	ClosedAt     *time.Time `json:"closed_at,omitempty"`
	// Test marks a verification sent to a test number of its app.
	Test bool `json:"test,omitempty"`
}

type adminAttempt struct {
	ID       int64     `json:"id"`
	Outcome  string    `json:"outcome"`
	ClientIP string    `json:"client_ip"`
	Time     time.Time `json:"time"`
}

func toVerificationResponse(d history.VerificationDetail) verificationResponse {
	v := d.Verification
	out := verificationResponse{
		Verification: adminVerification{
			ID: v.ID, Phone: v.Address, Channel: v.Channel, Locale: v.Locale, Status: string(v.Status),
			Sends: v.Sends, Attempts: v.Attempts, MaxAttempts: v.MaxAttempts, AttemptsLeft: v.AttemptsLeft(),
			ClientIP: v.ClientIP, CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt,
		},
		Sends:    make([]adminSend, len(d.Sends)),
		Attempts: make([]adminAttempt, len(d.Attempts)),
	}
	if !v.ClosedAt.IsZero() {
		out.Verification.ClosedAt = &v.ClosedAt
	}
	for i, s := range d.Sends {
		out.Sends[i] = toAdminSend(s)
		out.Verification.Test = out.Verification.Test || s.Test
	}
	for i, a := range d.Attempts {
		out.Attempts[i] = adminAttempt{ID: a.ID, Outcome: string(a.Outcome), ClientIP: a.ClientIP, Time: a.Time}
	}
	return out
}

// handleAdminSends lists sends newest first, one keyset page at a time.
func handleAdminSends(log *slog.Logger, a history.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, problems := p.sendFilter(r.URL.Query())
		if len(problems) > 0 {
			writeAdminProblem(w, r, log, invalidParams(problems))
			return
		}
		rows, next, err := a.ListSends(r.Context(), f)
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		out := sendsResponse{Sends: make([]adminSend, len(rows)), NextCursor: encodeCursor(next)}
		for i, row := range rows {
			out.Sends[i] = toAdminSend(row)
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// handleAdminSend shows one send.
func handleAdminSend(log *slog.Logger, a history.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		row, err := a.Send(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toAdminSend(row))
	})
}

// handleAdminVerification shows one verification with its sends and attempts.
func handleAdminVerification(log *slog.Logger, a history.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := a.VerificationDetail(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toVerificationResponse(d))
	})
}

// historyPage is the data of history.html.
type historyPage struct {
	Form historyForm
	// Apps fill the app filter; nil hides it.
	Apps     []apps.Info
	Statuses []string
	Problems []fieldProblem
	Rows     []history.SendRow
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
func handleHistoryPage(log *slog.Logger, view *adminView, a history.AdminService, apps apps.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f, problems := p.sendFilter(q)
		data := historyPage{Statuses: history.Statuses(), Form: historyForm{
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
			if !contact.IsEmailAddress(f.Phone) {
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
func handleVerificationPage(log *slog.Logger, view *adminView, a history.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := a.VerificationDetail(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data := struct {
			history.VerificationDetail
			LimitsURL string
		}{d, limitTarget{history.LimitTarget{Kind: history.TargetPhone, Key: d.Verification.Address}}.URL()}
		view.render(w, r, http.StatusOK, "verification", pageData{Title: "Verification", Nav: "history", Data: data})
	})
}
