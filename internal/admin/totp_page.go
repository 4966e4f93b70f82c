package admin

import (
	"context"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/totp"
)

// TOTP is what the console's TOTP page needs: *totp.Service, the one the native API uses.
type TOTP interface {
	Entities(ctx context.Context, appID string) ([]totp.Entity, error)
	Factors(ctx context.Context, appID, identity string) ([]totp.Factor, error)
	CreateFactor(ctx context.Context, app otp.App, n totp.NewFactor) (totp.Enrolment, error)
	VerifyFactor(ctx context.Context, appID, identity, id, code string) (totp.Factor, bool, error)
}

// totpPage is the data of totp.html.
type totpPage struct {
	App otp.App
	// Entities are the app's entities with their factors, never a secret.
	Entities []totpEntityRow
	Problems []fieldProblem
	// Identity and Name are what was typed into a refused enrolment form.
	Identity, Name string
	// Enrolment is the factor just created, with its secret, URI and QR code: shown once.
	Enrolment *totpEnrolmentView
	// Verified names the factor whose first code was just accepted.
	Verified string
}

// totpEntityRow is one entity and its factors.
type totpEntityRow struct {
	Entity  totp.Entity
	Factors []totp.Factor
}

// totpEnrolmentView is a new factor as the page shows it once.
type totpEnrolmentView struct {
	Factor totp.Factor
	Secret string
	URI    string
	// QR is the URI as a QR code, a PNG in a data URI; typed as a URL the page may use,
	// since html/template would otherwise refuse a data: URI.
	QR template.URL
}

// errWrongTOTPCode answers a first code that is wrong, out of time or used before.
var errWrongTOTPCode = map[string]string{"code": "is wrong, out of time or was used before"}

// handleTOTPPage shows an app's TOTP entities and factors (GET) and enrols a factor (POST).
// The enrolment's secret is in the answer to that POST only: it is not kept in plain.
func handleTOTPPage(log *slog.Logger, view *adminView, a apps.AdminService, s TOTP, audit history.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		info, err := a.GetApp(ctx, id)
		if err != nil {
			adminError(w, r, log, view, appNotFound(err))
			return
		}
		data := totpPage{App: info.App}
		status := http.StatusOK
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
				return
			}
			data.Identity, data.Name = strings.TrimSpace(r.PostForm.Get("identity")), strings.TrimSpace(r.PostForm.Get("friendly_name"))
			en, err := s.CreateFactor(ctx, info.App, totp.NewFactor{Identity: data.Identity, FriendlyName: data.Name, Config: totp.DefaultConfig()})
			if bad, ok := invalidFields(err); ok {
				status, data.Problems = http.StatusBadRequest, sortedProblems(bad)
			} else if err != nil {
				adminError(w, r, log, view, err)
				return
			} else {
				// The factor is made by the service the native API shares, which audits
				// nothing; the console's enrolment is an admin's change, audited here.
				if err := audit.Record(ctx, totpAudit(ActionTOTPFactorCreate, en.Factor, nil, &en.Factor)); err != nil {
					adminError(w, r, log, view, err)
					return
				}
				qr, err := totp.QRPNG(en.URI)
				if err != nil {
					adminError(w, r, log, view, err)
					return
				}
				status, data.Identity, data.Name = http.StatusCreated, "", ""
				data.Enrolment = &totpEnrolmentView{Factor: en.Factor, Secret: en.Secret, URI: en.URI,
					QR: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(qr))} // #nosec G203 -- drawn here, base64 only
			}
		}
		data.Verified = r.URL.Query().Get("verified")
		renderTOTP(w, r, log, view, s, status, data)
	})
}

// handleTOTPVerifyPage confirms a factor's enrolment with its first code, then goes back
// to the app's TOTP page; a wrong code shows the page again with the problem.
func handleTOTPVerifyPage(log *slog.Logger, view *adminView, a apps.AdminService, s TOTP, audit history.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		info, err := a.GetApp(ctx, id)
		if err != nil {
			adminError(w, r, log, view, appNotFound(err))
			return
		}
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		identity, factor := r.PostForm.Get("identity"), r.PostForm.Get("factor")
		fac, ok, err := s.VerifyFactor(ctx, info.App.ID, identity, factor, strings.TrimSpace(r.PostForm.Get("code")))
		bad, invalid := invalidFields(err)
		switch {
		case invalid:
			renderTOTP(w, r, log, view, s, http.StatusBadRequest, totpPage{App: info.App, Problems: sortedProblems(bad)})
		case err != nil:
			adminError(w, r, log, view, err)
		case !ok:
			renderTOTP(w, r, log, view, s, http.StatusUnprocessableEntity, totpPage{App: info.App, Problems: sortedProblems(errWrongTOTPCode)})
		default:
			was := fac
			was.Status = totp.FactorUnverified
			if err := audit.Record(ctx, totpAudit(ActionTOTPFactorVerify, fac, &was, &fac)); err != nil {
				adminError(w, r, log, view, err)
				return
			}
			http.Redirect(w, r, "/admin/apps/"+info.App.ID+"/totp?verified="+fac.ID, http.StatusSeeOther)
		}
	})
}

// Audit log actions of the console's TOTP page.
const (
	ActionTOTPFactorCreate = "totp_factor_create"
	ActionTOTPFactorVerify = "totp_factor_verify"
)

// totpFactorChange is a factor as the audit log shows it, never its secret or a code. Its
// identity is the app's own id of the user, which is not personal data (totp checks it).
type totpFactorChange struct {
	ID           string `json:"id"`
	Identity     string `json:"identity"`
	FriendlyName string `json:"friendly_name"`
	Status       string `json:"status"`
}

// totpAudit is the audit entry of a change of factor f from before to after (nil for none).
func totpAudit(action string, f totp.Factor, before, after *totp.Factor) history.AdminAction {
	change := func(f *totp.Factor) string {
		if f == nil {
			return ""
		}
		return history.Change(totpFactorChange{ID: f.ID, Identity: f.Identity, FriendlyName: f.FriendlyName, Status: string(f.Status)})
	}
	return history.AdminAction{Action: action, Target: "app:" + f.AppID + " totp:" + f.ID, Detail: "on the console",
		Before: change(before), After: change(after)}
}

// renderTOTP lists the app's entities and factors into data and shows the page. Every
// answer of it is no-store: one of them holds a secret.
func renderTOTP(w http.ResponseWriter, r *http.Request, log *slog.Logger, view *adminView, s TOTP, status int, data totpPage) {
	ctx := r.Context()
	entities, err := s.Entities(ctx, data.App.ID)
	if err != nil {
		adminError(w, r, log, view, err)
		return
	}
	for _, e := range entities {
		factors, err := s.Factors(ctx, data.App.ID, e.Identity)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data.Entities = append(data.Entities, totpEntityRow{Entity: e, Factors: factors})
	}
	w.Header().Set("Cache-Control", "no-store")
	view.render(w, r, status, "totp", pageData{Title: "TOTP of " + data.App.Name, Nav: "apps", Data: data})
}
