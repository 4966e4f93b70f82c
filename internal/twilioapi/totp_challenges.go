package twilioapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/totp"
)

// handleChallengeCreate serves POST …/Challenges: the code in AuthPayload is decided at
// once, approved or denied. Details and expiry belong to push challenges.
func handleChallengeCreate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := form(r); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		p := newParams(r.PostForm, "FactorSid", "ExpirationDate", "Details.Message", "Details.Fields", "HiddenDetails", "AuthPayload")
		p.refuse("is a parameter of push challenges, which otpgate does not support", "ExpirationDate", "Details.Message",
			"Details.Fields", "HiddenDetails")
		var fid string
		if s, ok := p.str("FactorSid"); ok {
			if id, ok := apps.IDFromSID(s, "YF"); ok {
				fid = id
			} else {
				p.fields["FactorSid"] = "must be a Factor sid (YF and 32 hex digits)"
			}
		} else if !p.has("FactorSid") {
			p.fields["FactorSid"] = "is required"
		}
		code, ok := p.str("AuthPayload")
		if !ok && !p.has("AuthPayload") {
			p.fields["AuthPayload"] = "is required: the code of a totp factor"
		}
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		ch, err := d.TOTP.CreateChallenge(r.Context(), c.app.ID, chi.URLParam(r, "Identity"), fid, code)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusCreated, newChallenge(r, c.app, ch))
	})
}

func handleChallengeList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		p := newParams(r.URL.Query(), append([]string{"FactorSid", "Status", "Order"}, pagingParams...)...)
		pr := readPage(p)
		var fid string
		if s, ok := p.str("FactorSid"); ok {
			if id, ok := apps.IDFromSID(s, "YF"); ok {
				fid = id
			} else {
				p.fields["FactorSid"] = "must be a Factor sid (YF and 32 hex digits)"
			}
		}
		var status totp.ChallengeStatus
		if s, ok := p.str("Status"); ok {
			switch s {
			case "approved", "denied":
				status = totp.ChallengeStatus(s)
			case "pending", "expired":
				status = "none" // a TOTP challenge is decided when made: none is pending or expired
			default:
				p.fields["Status"] = "must be pending, expired, approved or denied"
			}
		}
		asc := false
		if s, ok := p.str("Order"); ok {
			switch s {
			case "asc":
				asc = true
			case "desc":
			default:
				p.fields["Order"] = "must be asc or desc"
			}
		}
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		identity := chi.URLParam(r, "Identity")
		var all []totp.Challenge
		var err error
		if status != "none" {
			all, err = d.TOTP.Challenges(r.Context(), c.app.ID, identity, fid, status)
		} else {
			_, err = d.TOTP.Entity(r.Context(), c.app.ID, identity)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		if asc {
			for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
				all[i], all[j] = all[j], all[i]
			}
		}
		items, more := pageOf(all, pr)
		out := make([]challenge, len(items))
		for i, ch := range items {
			out[i] = newChallenge(r, c.app, ch)
		}
		writeJSON(w, http.StatusOK, struct {
			Challenges []challenge `json:"challenges"`
			Meta       meta        `json:"meta"`
		}{out, newMeta(r, entityPath(c.app, identity)+"/Challenges", "challenges", pr, more, "")})
	})
}

func handleChallengeFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := sidParam(r, "YC")
		if err == nil {
			err = noQuery(r)
		}
		var ch totp.Challenge
		if err == nil {
			ch, err = d.TOTP.Challenge(r.Context(), c.app.ID, chi.URLParam(r, "Identity"), id)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusOK, newChallenge(r, c.app, ch))
	})
}

// handleChallengeUpdate serves POST …/Challenges/{Sid}: a TOTP challenge was decided when
// it was made, so there is nothing to update (a push challenge's answer would go here).
func handleChallengeUpdate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := sidParam(r, "YC")
		if err == nil {
			_, err = d.TOTP.Challenge(r.Context(), c.app.ID, chi.URLParam(r, "Identity"), id)
		}
		if err == nil {
			err = &otp.ErrInvalidRequest{Fields: map[string]string{"AuthPayload": "a totp challenge is decided when it is created: create a new challenge with the code"}}
		}
		writeTOTPError(w, r, d, err)
	})
}
