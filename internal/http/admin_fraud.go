package http

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/fraud"
	"otpgate/internal/otp"
)

// Read-only members of the fraud configuration's JSON, ignored when a client sends the
// answer of a GET back with its changes.
const (
	fraudVersionField = "version"
	fraudAppliedField = "applied_version"
)

// fraudConfigJSON is the fraud configuration as the API shows it: every setting by name
// (numbers as JSON numbers), the stored version, and the version this instance applies.
func fraudConfigJSON(c fraud.Config, version, applied int64) map[string]any {
	out := map[string]any{fraudVersionField: version, fraudAppliedField: applied}
	for name, text := range c.Values() {
		if fraud.Numeric(name) {
			out[name] = json.Number(text)
		} else {
			out[name] = text
		}
	}
	return out
}

// handleFraudConfig answers GET with the configuration and PUT with the configuration after
// setting the body's settings (any subset of them) on it.
func handleFraudConfig(log *slog.Logger, f fraud.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			values, err := readFraudSettings(r)
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			if _, _, err := f.UpdateSettings(r.Context(), values, actorFrom(r.Context())); err != nil {
				writeFraudProblem(w, r, log, err, "")
				return
			}
		}
		c, version, err := f.Settings(r.Context())
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		_ = encode(w, http.StatusOK, fraudConfigJSON(c, version, f.Running().Version))
	})
}

// readFraudSettings reads a PUT body: one JSON object of settings, each a string or a
// number, read as its text; duplicates are refused as everywhere.
func readFraudSettings(r *http.Request) (map[string]string, error) {
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	if err := checkJSON(body, nil); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, invalidRequest("malformed JSON: "+err.Error(), nil)
	}
	values, bad := map[string]string{}, map[string]string{}
	for name, v := range raw {
		switch v := v.(type) {
		case string:
			values[name] = v
		case json.Number:
			values[name] = v.String()
		default:
			bad[name] = "must be a string or a number"
		}
	}
	delete(values, fraudVersionField)
	delete(values, fraudAppliedField)
	if len(bad) > 0 {
		return nil, invalidRequest("the request has invalid fields", bad)
	}
	return values, nil
}

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
	dec := newDecoder[fraudEntryRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := readJSON(r)
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			in, err := dec.decode(body)
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
			_ = encode(w, http.StatusCreated, toFraudEntry(e))
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
		_ = encode(w, http.StatusOK, out)
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
		_ = encode(w, http.StatusOK, toFraudEntry(e))
	})
}
