package admin

import (
	"log/slog"
	"net/http"

	"otpgate/internal/httpkit"
	"otpgate/internal/spend"
)

// spendConfigJSON is the spend configuration as the API shows it, with the stored version
// and the version this instance applies. A PUT may send it back changed: the versions are
// read and ignored.
type spendConfigJSON struct {
	Currency       string            `json:"currency"`
	Prices         []spend.PriceText `json:"prices"`
	Budgets        []spend.Budget    `json:"budgets"`
	Version        int64             `json:"version"`
	AppliedVersion int64             `json:"applied_version"`
}

// spendDecoder reads a PUT body strictly.
var spendDecoder = httpkit.NewDecoder[spendConfigJSON]()

// handleSpendConfig answers GET with the price table and the budgets, and PUT with them
// after replacing them with the body's (validated as a whole: a bad field changes nothing).
func handleSpendConfig(log *slog.Logger, s spend.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			body, err := httpkit.ReadJSON(r)
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			in, err := spendDecoder.Decode(body)
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			c := spend.Config{Currency: in.Currency, Prices: in.Prices, Budgets: in.Budgets}
			if _, _, err := s.SetConfig(r.Context(), c, actorFrom(r.Context())); err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
		}
		c, version, err := s.Config(r.Context())
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, spendConfigJSON{
			Currency: c.Currency, Prices: c.Prices, Budgets: c.Budgets, Version: version, AppliedVersion: s.Running().Version,
		})
	})
}
