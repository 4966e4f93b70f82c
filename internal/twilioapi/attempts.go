package twilioapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// Attempts reads verification attempts (every send of a verification) from history;
// history.Store implements it.
type Attempts interface {
	history.AttemptReader
	// Send returns one send by id. Errors: otp.ErrNotFound.
	Send(ctx context.Context, id string) (history.SendRow, error)
}

// verificationAttempt is Twilio's Verification Attempt: one send of a verification.
type verificationAttempt struct {
	Sid              string         `json:"sid"`
	AccountSid       string         `json:"account_sid"`
	ServiceSid       string         `json:"service_sid"`
	VerificationSid  string         `json:"verification_sid"`
	DateCreated      string         `json:"date_created"`
	DateUpdated      string         `json:"date_updated"`
	ConversionStatus string         `json:"conversion_status"`
	Channel          string         `json:"channel"`
	Price            *struct{}      `json:"price"`
	ChannelData      map[string]any `json:"channel_data"`
	URL              string         `json:"url"`
}

// attemptSID is a send id in Twilio's form: "VL" and the UUID's 32 hex digits.
func attemptSID(id string) string { return "VL" + strings.ReplaceAll(id, "-", "") }

func newAttempt(r *http.Request, row history.SendRow) verificationAttempt {
	conversion := "unconverted"
	if history.Converted(row) {
		conversion = "converted"
	}
	sid := attemptSID(row.ID)
	return verificationAttempt{
		Sid: sid, AccountSid: accountSID(otp.App{ID: row.AppID}), ServiceSid: apps.ServiceSID(row.AppID),
		VerificationSid: apps.VerificationSID(row.VerificationID),
		DateCreated:     twilioTime(row.Time), DateUpdated: twilioTime(row.Updated),
		ConversionStatus: conversion, Channel: twilioChannel(row.Channel),
		ChannelData: map[string]any{"to": row.Phone, "status": messageStatus(row), "error_code": nil},
		URL:         resourceURL(r, "/Attempts/"+sid),
	}
}

// messageStatus is a send's state in the words of Twilio's message statuses: what its
// receipt said, else how far the send got.
func messageStatus(row history.SendRow) string {
	if row.Delivery != "" {
		return row.Delivery
	}
	switch row.SendStatus {
	case otp.SendSending:
		return "queued"
	case otp.SendSent:
		return "sent"
	}
	return string(row.SendStatus)
}

// attemptFilter reads the filters the list and the summary share, for the caller: an
// app key sees its own service's attempts only, and names another service at its peril
// (20404). none reports a filter that nothing can match (Channel=rbm: otpgate has no RCS).
func attemptFilter(p *params, k apps.Key) (f history.AttemptFilter, none bool, err error) {
	for name, dst := range map[string]*time.Time{"DateCreatedAfter": &f.From, "DateCreatedBefore": &f.To} {
		if s, ok := p.str(name); ok {
			t, perr := time.Parse(time.RFC3339, strings.TrimSpace(s))
			if perr != nil {
				p.fields[name] = "must be a time in RFC 3339 (ISO 8601), such as 2030-01-02T03:04:05Z"
			}
			*dst = t.UTC()
		}
	}
	if s, ok := p.str("Country"); ok {
		f.Country = strings.ToUpper(strings.TrimSpace(s))
	}
	if s, ok := p.str("Channel"); ok {
		switch ch := strings.ToLower(strings.TrimSpace(s)); ch {
		case "rbm":
			none = true
		case "sms", "call", "email", "whatsapp":
			f.Channel = channel(ch)
		default:
			p.fields["Channel"] = "must be sms, call, email, whatsapp or rbm"
		}
	}
	if s, ok := p.str("VerifyServiceSid"); ok {
		if f.AppID, ok = apps.IDFromSID(s, "VA"); !ok {
			p.fields["VerifyServiceSid"] = "must be a service sid (VA and 32 hex digits)"
		}
	}
	if !isAccount(k) {
		if f.AppID != "" && f.AppID != k.AppID {
			return f, none, errNoService
		}
		f.AppID = k.AppID
	}
	return f, none, nil
}

// attemptFields name the history filter's fields by Twilio's parameters.
var attemptFields = map[string]string{
	"app": "VerifyServiceSid", "verification": "VerificationSid", "country": "Country", "channel": "Channel",
	"prefix": "DestinationPrefix", "cursor": "PageToken",
}

// handleAttemptList serves GET /v2/Attempts, newest first.
func handleAttemptList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := newParams(r.URL.Query(), append(pagingParams, "PageToken", "DateCreatedAfter", "DateCreatedBefore", "ChannelData.To",
			"Country", "Channel", "VerifyServiceSid", "VerificationSid", "Status")...)
		pr := readPage(p)
		f, none, err := attemptFilter(p, accountCaller(r.Context()))
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		f.Limit = pr.size
		if s, ok := p.str("ChannelData.To"); ok {
			f.Address = strings.TrimSpace(s)
		}
		if s, ok := p.str("VerificationSid"); ok {
			if f.VerificationID, ok = apps.IDFromSID(s, "VE"); !ok {
				p.fields["VerificationSid"] = "must be a verification sid (VE and 32 hex digits)"
			}
		}
		if s, ok := p.str("Status"); ok {
			switch c := strings.ToLower(strings.TrimSpace(s)); c {
			case "converted", "unconverted":
				converted := c == "converted"
				f.Converted = &converted
			default:
				p.fields["Status"] = "must be converted or unconverted"
			}
		}
		if s, ok := p.str("PageToken"); ok {
			if f.After, ok = readPageToken(s); !ok {
				p.fields["PageToken"] = "must be a PageToken of a next_page_url"
			}
		} else if pr.number > 0 {
			p.fields["Page"] = "a later page needs the PageToken of the previous page's next_page_url"
		}
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		var (
			rows []history.SendRow
			next *history.SendCursor
		)
		if !none {
			if rows, next, err = d.Attempts.VerificationAttempts(r.Context(), f); err != nil {
				writeError(w, r, d.Logger, renamed(err, attemptFields))
				return
			}
		}
		out := make([]verificationAttempt, len(rows))
		for i, row := range rows {
			out[i] = newAttempt(r, row)
		}
		token := ""
		if next != nil {
			token = pageToken(*next)
		}
		writeJSON(w, http.StatusOK, struct {
			Attempts []verificationAttempt `json:"attempts"`
			Meta     meta                  `json:"meta"`
		}{out, newMeta(r, "/Attempts", "attempts", pr, next != nil, token)})
	})
}

// handleAttemptFetch serves GET /v2/Attempts/{Sid}.
func handleAttemptFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := newParams(r.URL.Query()).err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		id, ok := apps.IDFromSID(chi.URLParam(r, "Sid"), "VL")
		if !ok {
			writeError(w, r, d.Logger, errNoResource)
			return
		}
		row, err := d.Attempts.Send(r.Context(), id)
		k := accountCaller(r.Context())
		if err == nil && (row.VerificationID == "" || !isAccount(k) && row.AppID != k.AppID) {
			err = errNoResource // a refused send is no attempt; another app's is not the key's
		}
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		writeJSON(w, http.StatusOK, newAttempt(r, row))
	})
}

// attemptsSummary is Twilio's Verification Attempts Summary.
type attemptsSummary struct {
	TotalAttempts            int64  `json:"total_attempts"`
	TotalConverted           int64  `json:"total_converted"`
	TotalUnconverted         int64  `json:"total_unconverted"`
	ConversionRatePercentage string `json:"conversion_rate_percentage"`
	URL                      string `json:"url"`
}

// handleAttemptSummary serves GET /v2/Attempts/Summary.
func handleAttemptSummary(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := newParams(r.URL.Query(), "VerifyServiceSid", "DateCreatedAfter", "DateCreatedBefore", "Country", "Channel", "DestinationPrefix")
		f, none, err := attemptFilter(p, accountCaller(r.Context()))
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		if s, ok := p.str("DestinationPrefix"); ok {
			f.Prefix = strings.TrimSpace(s)
		}
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		var sum history.AttemptsSummary
		if !none {
			if sum, err = d.Attempts.AttemptsSummary(r.Context(), f); err != nil {
				writeError(w, r, d.Logger, renamed(err, attemptFields))
				return
			}
		}
		rate := 0.0
		if sum.Attempts > 0 {
			rate = 100 * float64(sum.Converted) / float64(sum.Attempts)
		}
		writeJSON(w, http.StatusOK, attemptsSummary{
			TotalAttempts: sum.Attempts, TotalConverted: sum.Converted, TotalUnconverted: sum.Attempts - sum.Converted,
			ConversionRatePercentage: strconv.FormatFloat(rate, 'f', 2, 64), URL: resourceURL(r, "/Attempts/Summary"),
		})
	})
}

// pageToken names the position a next page of attempts starts after: the last send's
// time (Unix microseconds) and id.
func pageToken(c history.SendCursor) string {
	return "PT" + strconv.FormatInt(c.Time.UnixMicro(), 10) + "-" + strings.ReplaceAll(c.ID, "-", "")
}

// readPageToken reads a pageToken back; ok is false for anything else.
func readPageToken(s string) (*history.SendCursor, bool) {
	at, id, found := strings.Cut(strings.TrimPrefix(s, "PT"), "-")
	micros, err := strconv.ParseInt(at, 10, 64)
	u, uerr := uuid.Parse(id)
	if !strings.HasPrefix(s, "PT") || !found || err != nil || micros < 0 || uerr != nil || len(id) != 32 {
		return nil, false
	}
	return &history.SendCursor{Time: time.UnixMicro(micros).UTC(), ID: u.String()}, true
}

// attemptRoutes adds the Verification Attempts to the account-level routes.
func attemptRoutes(r chi.Router, d Deps) {
	auth := authenticateAccount(d)
	r.With(auth).Method(http.MethodGet, "/Attempts", handleAttemptList(d))
	r.With(auth).Method(http.MethodGet, "/Attempts/Summary", handleAttemptSummary(d))
	r.With(auth).Method(http.MethodGet, "/Attempts/{Sid}", handleAttemptFetch(d))
}
