package admin

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/history"
)

// How much the Fraud page shows.
const (
	fraudPrefixesShown   = 20
	fraudShadowShown     = 20
	fraudChallengedShown = 20
	fraudActionsShown    = 20
	fraudSince           = 24 * time.Hour
)

// fraudPage is the data of fraud.html.
type fraudPage struct {
	Mode             fraud.Mode
	Version, Applied int64
	Settings         []fraudSetting
	Problems         []fieldProblem
	Countries        []fraud.Conversion
	Prefixes         []fraud.Conversion
	Blocks           []fraudBlock
	Shadow           []history.SendRow
	// Challenged are the newest sends refused for want of a challenge or admitted on a
	// solved one, with their explanations.
	Challenged []history.SendRow
	Lists      []fraudListView
	Kinds      []string
	Entry      fraudEntryForm
	// Done names what the last change did, for the confirmation line.
	Done    string
	Actions []history.AdminAction
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
	if data.Challenged, err = f.ChallengedSends(ctx, fraudChallengedShown); err != nil {
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
