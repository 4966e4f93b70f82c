package http

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/fraud"
	"otpgate/internal/otp"
)

// How much the Fraud page shows.
const (
	fraudPrefixesShown = 20
	fraudShadowShown   = 20
	fraudActionsShown  = 20
	fraudSince         = 24 * time.Hour
)

// fraudSettingHelp says in a line what each setting does, for the rule editor.
var fraudSettingHelp = map[string]string{
	"fraud_guard":         "off, shadow (reports what it would block) or enforce",
	"fraud_block":         "how long a trip blocks its target",
	"limit_country":       "static rules per country, such as *:500/1h,NG:10/1h; a rule ending :shadow only reports",
	"limit_prefix":        "static rules for every number prefix, such as 10/1h",
	"limit_ip_net":        "static rules for every client network (IPv4 /24, IPv6 /48)",
	"prefix_drop":         "how many last digits a prefix leaves out",
	"fraud_short_horizon": "time constant of the recent counts",
	"fraud_long_horizon":  "time constant of the baseline counts",
	"fraud_ratio":         "trip when recent conversion falls below this times the baseline",
	"fraud_prior_rate":    "conversion assumed before a target has history",
	"fraud_prior_weight":  "how many sends that assumption weighs",
	"fraud_floor_country": "unapproved recent sends a country may have before it can trip",
	"fraud_floor_prefix":  "unapproved recent sends a prefix may have before it can trip",
	"fraud_floor_ip_net":  "unapproved recent sends a network may have before it can trip",
}

// fraudSetting is one line of the rule editor.
type fraudSetting struct {
	Name, Value, Env, Help string
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

// fraudPage is the data of fraud.html.
type fraudPage struct {
	Mode             fraud.Mode
	Version, Applied int64
	Settings         []fraudSetting
	Problems         []fieldProblem
	Countries        []fraud.Conversion
	Prefixes         []fraud.Conversion
	Blocks           []fraudBlock
	Shadow           []otp.SendRow
	Lists            []fraudListView
	Kinds            []string
	Entry            fraudEntryForm
	// Done names what the last change did, for the confirmation line.
	Done    string
	Actions []otp.AdminAction
}

// loadFraudPage gathers the page; settings, when not nil, are shown instead of the stored ones.
func loadFraudPage(ctx context.Context, f fraud.AdminService, p adminParams, settings map[string]string) (fraudPage, error) {
	c, version, err := f.Settings(ctx)
	if err != nil {
		return fraudPage{}, err
	}
	running := f.Running()
	data := fraudPage{Mode: running.Config.Mode, Version: version, Applied: running.Version, Entry: fraudEntryForm{List: "block"}}
	values := c.Values()
	for _, name := range fraud.FieldNames() {
		v := values[name]
		if settings != nil {
			v = settings[name]
		}
		data.Settings = append(data.Settings, fraudSetting{Name: name, Value: v, Env: fraud.EnvName(name), Help: fraudSettingHelp[name]})
	}
	since := p.now().Add(-fraudSince)
	if data.Countries, err = f.Conversion(ctx, fraud.ByCountry, since); err != nil {
		return fraudPage{}, err
	}
	if data.Prefixes, err = f.Conversion(ctx, fraud.ByPrefix, since); err != nil {
		return fraudPage{}, err
	}
	data.Prefixes = data.Prefixes[:min(len(data.Prefixes), fraudPrefixesShown)]
	blocks, err := f.Blocks(ctx, false)
	if err != nil {
		return fraudPage{}, err
	}
	now := p.now()
	for _, b := range blocks {
		data.Blocks = append(data.Blocks, toFraudBlock(b, now))
	}
	if data.Shadow, err = f.ShadowSends(ctx, fraudShadowShown); err != nil {
		return fraudPage{}, err
	}
	entries, err := f.Lists(ctx)
	if err != nil {
		return fraudPage{}, err
	}
	data.Lists = []fraudListView{{Name: "block", Title: "Block list"}, {Name: "safe", Title: "Safe list"}}
	for _, e := range entries {
		i := 0
		if e.List == fraud.SafeList {
			i = 1
		}
		data.Lists[i].Entries = append(data.Lists[i].Entries, e)
	}
	data.Kinds = []string{string(fraud.KindNumber), string(fraud.KindPrefix), string(fraud.KindCountry), string(fraud.KindCIDR)}
	if data.Actions, err = f.Actions(ctx, fraudActionsShown); err != nil {
		return fraudPage{}, err
	}
	return data, nil
}

// renderFraud renders the page with status, after loading it.
func renderFraud(w http.ResponseWriter, r *http.Request, view *adminView, status int, data fraudPage) {
	view.render(w, r, status, "fraud", pageData{Title: "Fraud", Nav: "fraud", Data: data})
}

// handleFraudPage shows conversion, blocks, shadow findings, the lists and the rule editor.
func handleFraudPage(log *slog.Logger, view *adminView, f fraud.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := loadFraudPage(r.Context(), f, p, nil)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data.Done = fraudDoneText(r.URL.Query().Get("done"))
		renderFraud(w, r, view, http.StatusOK, data)
	})
}

// fraudDoneText is the confirmation of a change the page was redirected after.
func fraudDoneText(done string) string {
	switch done {
	case "config":
		return "The settings were saved; every instance applies them within 2 seconds."
	case "added":
		return "The entry was added."
	case "removed":
		return "The entry was removed."
	case "lifted":
		return "The block was lifted."
	}
	return ""
}

// handleFraudConfigForm saves the rule editor: every setting it sent, validated together.
func handleFraudConfigForm(log *slog.Logger, view *adminView, f fraud.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		values := map[string]string{}
		for _, name := range fraud.FieldNames() {
			if v, ok := r.PostForm[name]; ok && len(v) == 1 {
				values[name] = v[0]
			}
		}
		_, _, err := f.UpdateSettings(r.Context(), values, actorFrom(r.Context()))
		if fields, ok := invalidFields(err); ok {
			data, lerr := loadFraudPage(r.Context(), f, p, values)
			if lerr != nil {
				adminError(w, r, log, view, lerr)
				return
			}
			data.Problems = sortedProblems(fields)
			renderFraud(w, r, view, http.StatusBadRequest, data)
			return
		}
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, "/admin/fraud?done=config", http.StatusSeeOther)
	})
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
