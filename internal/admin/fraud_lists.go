package admin

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/fraud"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// fraudEntry is one list entry as the API shows it.
type fraudEntry struct {
	ID        int64     `json:"id"`
	List      string    `json:"list"`
	Kind      string    `json:"kind"`
	Value     string    `json:"value"`
	Note      string    `json:"note"`
	CreatedAt time.Time `json:"created_at"`
}

func toFraudEntry(e fraud.ListEntry) fraudEntry {
	return fraudEntry{ID: e.ID, List: string(e.List), Kind: string(e.Kind), Value: e.Value, Note: e.Note, CreatedAt: e.CreatedAt}
}

// fraudEntryRequest is the body of POST /admin/api/fraud/lists; kind is told from the value
// when left out.
type fraudEntryRequest struct {
	List  string `json:"list"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
	Note  string `json:"note"`
}

// handleFraudLists lists both lists (GET, ?list=safe|block for one) or adds an entry (POST).
func handleFraudLists(log *slog.Logger, f fraud.AdminService) http.Handler {
	dec := httpkit.NewDecoder[fraudEntryRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := httpkit.ReadJSON(r)
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			in, err := dec.Decode(body)
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			e, err := fraud.NewListEntry(in.List, in.Kind, in.Value, in.Note)
			if err == nil {
				e, err = f.AddListEntry(r.Context(), e, actorFrom(r.Context()))
			}
			if err != nil {
				writeFraudProblem(w, r, log, err, "")
				return
			}
			_ = httpkit.Encode(w, http.StatusCreated, toFraudEntry(e))
			return
		}
		list := r.URL.Query().Get("list")
		if list != "" && list != string(fraud.SafeList) && list != string(fraud.BlockList) {
			writeAdminProblem(w, r, log, invalidParams(map[string]string{"list": `must be "safe" or "block"`}))
			return
		}
		entries, err := f.Lists(r.Context())
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		out := struct {
			Entries []fraudEntry `json:"entries"`
		}{Entries: []fraudEntry{}}
		for _, e := range entries {
			if list == "" || string(e.List) == list {
				out.Entries = append(out.Entries, toFraudEntry(e))
			}
		}
		_ = httpkit.Encode(w, http.StatusOK, out)
	})
}

// handleFraudListEntry removes one entry and answers it.
func handleFraudListEntry(log *slog.Logger, f fraud.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
		if err != nil {
			writeFraudProblem(w, r, log, otp.ErrNotFound, "there is no such list entry")
			return
		}
		e, err := f.RemoveListEntry(r.Context(), id, actorFrom(r.Context()))
		if err != nil {
			writeFraudProblem(w, r, log, err, "there is no such list entry")
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, toFraudEntry(e))
	})
}

// fraudEntryForm is the list form's input, kept when it is refused.
type fraudEntryForm struct {
	List, Kind, Value, Note string
}

// fraudListView is one list as the page shows it.
type fraudListView struct {
	Name, Title string
	Entries     []fraud.ListEntry
}

// handleFraudListForm adds an entry to the safe or block list.
func handleFraudListForm(log *slog.Logger, view *adminView, f fraud.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		in := fraudEntryForm{List: r.PostFormValue("list"), Kind: r.PostFormValue("kind"), Value: r.PostFormValue("value"), Note: r.PostFormValue("note")}
		e, err := fraud.NewListEntry(in.List, in.Kind, in.Value, in.Note)
		if err == nil {
			_, err = f.AddListEntry(r.Context(), e, actorFrom(r.Context()))
		}
		if fields, ok := invalidFields(err); ok {
			data, lerr := loadFraudPage(r.Context(), f, p, nil)
			if lerr != nil {
				adminError(w, r, log, view, lerr)
				return
			}
			data.Problems, data.Entry = sortedProblems(fields), in
			renderFraud(w, r, view, http.StatusBadRequest, data)
			return
		}
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, "/admin/fraud?done=added#lists", http.StatusSeeOther)
	})
}

// handleFraudListDeleteForm removes a list entry.
func handleFraudListDeleteForm(log *slog.Logger, view *adminView, f fraud.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
		if err == nil {
			_, err = f.RemoveListEntry(r.Context(), id, actorFrom(r.Context()))
		} else {
			err = otp.ErrNotFound
		}
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, "/admin/fraud?done=removed#lists", http.StatusSeeOther)
	})
}
