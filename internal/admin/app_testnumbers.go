package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// adminTestNumber is one test number as the admin API shows it: its code masked.
type adminTestNumber struct {
	ID        string    `json:"id"`
	AppID     string    `json:"app_id"`
	Address   string    `json:"address"`
	Code      string    `json:"code"`
	ExpiresAt time.Time `json:"expires_at"`
	CreatedAt time.Time `json:"created_at"`
	Active    bool      `json:"active"`
}

func toAdminTestNumber(t apps.TestNumberInfo, now time.Time) adminTestNumber {
	return adminTestNumber{ID: t.ID, AppID: t.AppID, Address: t.Address, Code: t.MaskedCode, ExpiresAt: t.ExpiresAt,
		CreatedAt: t.CreatedAt, Active: t.Active(now)}
}

// testNumberRequest is the body of POST /admin/api/apps/{id}/test-numbers.
type testNumberRequest struct {
	Address   string    `json:"address"`
	Code      string    `json:"code"`
	ExpiresAt time.Time `json:"expires_at"`
}

// handleAdminTestNumbers lists an app's test numbers and adds one.
func handleAdminTestNumbers(log *slog.Logger, a apps.AdminService, p adminParams) http.Handler {
	requests := httpkit.NewDecoder[testNumberRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		if r.Method == http.MethodPost {
			body, err := httpkit.ReadJSON(r)
			var req testNumberRequest
			if err == nil {
				req, err = requests.Decode(body)
			}
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			t, err := a.AddTestNumber(ctx, id, apps.NewTestNumber{Address: req.Address, Code: req.Code, ExpiresAt: req.ExpiresAt}, actorFrom(ctx))
			if err != nil {
				writeAdminProblem(w, r, log, testNumberNotFound(err))
				return
			}
			_ = httpkit.Encode(w, http.StatusCreated, toAdminTestNumber(t, p.now()))
			return
		}
		list, err := a.TestNumbers(ctx, id)
		if err != nil {
			writeAdminProblem(w, r, log, testNumberNotFound(err))
			return
		}
		out := struct {
			TestNumbers []adminTestNumber `json:"test_numbers"`
		}{TestNumbers: make([]adminTestNumber, len(list))}
		for i, t := range list {
			out.TestNumbers[i] = toAdminTestNumber(t, p.now())
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// handleAdminTestNumber removes a test number and answers it.
func handleAdminTestNumber(log *slog.Logger, a apps.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, err := a.RemoveTestNumber(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "tid"), actorFrom(r.Context()))
		if err != nil {
			writeAdminProblem(w, r, log, testNumberNotFound(err))
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toAdminTestNumber(t, p.now()))
	})
}

// testNumberNotFound names a missing app or test number in the answer.
func testNumberNotFound(err error) error {
	if errors.Is(err, otp.ErrNotFound) {
		return errAdminNoSuchTestNumber
	}
	return err
}

var errAdminNoSuchTestNumber = otp.Errorf(otp.CodeNotFound, "there is no such app or test number")

// testsSection is what the app's page shows of its test numbers.
type testsSection struct {
	List []adminTestNumber
	// Address and Expires are what was typed into a refused form; the code never comes back.
	Address, Expires string
	// Added names the number just added.
	Added string
}

// testExpiryLayout is the console's expiry: a day, the number works until its start (UTC).
const testExpiryLayout = "2006-01-02"

// handleTestNumberAddPage adds a test number from the app's page and shows the page again.
func handleTestNumberAddPage(log *slog.Logger, view *adminView, a apps.AdminService, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		address, expires := r.PostForm.Get("address"), strings.TrimSpace(r.PostForm.Get("expires"))
		at, perr := time.Parse(testExpiryLayout, expires)
		var err error
		if perr != nil {
			err = &otp.ErrInvalidRequest{Fields: map[string]string{"expires_at": "must be a day such as 2030-01-31"}}
		} else {
			_, err = a.AddTestNumber(ctx, id, apps.NewTestNumber{Address: address, Code: strings.TrimSpace(r.PostForm.Get("code")), ExpiresAt: at}, actorFrom(ctx))
		}
		var invalid *otp.ErrInvalidRequest
		switch {
		case errors.As(err, &invalid):
			renderApp(w, r, log, view, a, hooks, id, http.StatusBadRequest, invalid.Fields, nil, nil, hooksSection{},
				func(t *testsSection) { t.Address, t.Expires = address, expires })
		case err != nil:
			adminError(w, r, log, view, testNumberNotFound(err))
		default:
			http.Redirect(w, r, "/admin/apps/"+id+"#test-numbers", http.StatusSeeOther)
		}
	})
}

// handleTestNumberRemovePage removes a test number and goes back to the app's page.
func handleTestNumberRemovePage(log *slog.Logger, view *adminView, a apps.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		if _, err := a.RemoveTestNumber(r.Context(), id, chi.URLParam(r, "tid"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, testNumberNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/apps/"+id+"#test-numbers", http.StatusSeeOther)
	})
}
