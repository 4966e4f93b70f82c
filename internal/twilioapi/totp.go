package twilioapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/totp"
)

// TOTP is what the Entities, Factors and Challenges resources need: *totp.Service.
type TOTP interface {
	CreateEntity(ctx context.Context, appID, identity string) (totp.Entity, error)
	Entity(ctx context.Context, appID, identity string) (totp.Entity, error)
	Entities(ctx context.Context, appID string) ([]totp.Entity, error)
	DeleteEntity(ctx context.Context, appID, identity string) error
	CreateFactor(ctx context.Context, app otp.App, n totp.NewFactor) (totp.Enrolment, error)
	Factor(ctx context.Context, appID, identity, id string) (totp.Factor, error)
	Factors(ctx context.Context, appID, identity string) ([]totp.Factor, error)
	RenameFactor(ctx context.Context, appID, identity, id, name string) (totp.Factor, error)
	DeleteFactor(ctx context.Context, appID, identity, id string) error
	VerifyFactor(ctx context.Context, appID, identity, id, code string) (totp.Factor, bool, error)
	CreateChallenge(ctx context.Context, appID, identity, factorID, code string) (totp.Challenge, error)
	Challenge(ctx context.Context, appID, identity, id string) (totp.Challenge, error)
	Challenges(ctx context.Context, appID, identity, factorID string, status totp.ChallengeStatus) ([]totp.Challenge, error)
}

// codeFactorUnverified is Twilio's refusal of a challenge of a factor no code confirmed.
const codeFactorUnverified = 60318

// totpParams name the TOTP service's fields by Twilio's parameters.
var totpParams = map[string]string{
	"identity": "Identity", "friendly_name": "FriendlyName", "alg": "Config.Alg", "digits": "Config.CodeLength",
	"period": "Config.TimeStep", "skew": "Config.Skew", "secret": "Binding.Secret", "code": "AuthPayload", "factor_id": "FactorSid",
}

// sid writes a row's UUID as a Twilio sid with prefix (YE, YF, YC for TOTP; RK, BL for rate limits and buckets).
func sid(prefix, id string) string { return prefix + strings.ReplaceAll(id, "-", "") }

// entity is Twilio's Entity resource.
type entity struct {
	Sid         string            `json:"sid"`
	Identity    string            `json:"identity"`
	AccountSid  string            `json:"account_sid"`
	ServiceSid  string            `json:"service_sid"`
	DateCreated string            `json:"date_created"`
	DateUpdated string            `json:"date_updated"`
	URL         string            `json:"url"`
	Links       map[string]string `json:"links"`
}

func entityPath(app otp.App, identity string) string {
	return "/Services/" + apps.ServiceSID(app.ID) + "/Entities/" + identity
}

func newEntity(r *http.Request, app otp.App, e totp.Entity) entity {
	path := entityPath(app, e.Identity)
	return entity{
		Sid: sid("YE", e.ID), Identity: e.Identity, AccountSid: accountSID(app), ServiceSid: apps.ServiceSID(app.ID),
		DateCreated: twilioTime(e.CreatedAt), DateUpdated: twilioTime(e.CreatedAt), URL: resourceURL(r, path),
		Links: map[string]string{"factors": resourceURL(r, path+"/Factors"), "challenges": resourceURL(r, path+"/Challenges")},
	}
}

// factorConfig is a TOTP factor's config as Twilio writes it.
type factorConfig struct {
	Alg        string `json:"alg"`
	Skew       int    `json:"skew"`
	CodeLength int    `json:"code_length"`
	TimeStep   int    `json:"time_step"`
}

// factor is Twilio's Factor resource; a new one (create's answer) adds the binding, which
// is shown this once.
type factor struct {
	Sid          string         `json:"sid"`
	AccountSid   string         `json:"account_sid"`
	ServiceSid   string         `json:"service_sid"`
	EntitySid    string         `json:"entity_sid"`
	Identity     string         `json:"identity"`
	DateCreated  string         `json:"date_created"`
	DateUpdated  string         `json:"date_updated"`
	FriendlyName string         `json:"friendly_name"`
	Status       string         `json:"status"`
	FactorType   string         `json:"factor_type"`
	Config       factorConfig   `json:"config"`
	Metadata     map[string]any `json:"metadata"`
	URL          string         `json:"url"`
}

type newFactorAnswer struct {
	factor
	Binding struct {
		Secret string `json:"secret"`
		URI    string `json:"uri"`
	} `json:"binding"`
	Options *struct{} `json:"options"`
}

func newFactor(r *http.Request, app otp.App, f totp.Factor) factor {
	return factor{
		Sid: sid("YF", f.ID), AccountSid: accountSID(app), ServiceSid: apps.ServiceSID(app.ID), EntitySid: sid("YE", f.EntityID),
		Identity: f.Identity, DateCreated: twilioTime(f.CreatedAt), DateUpdated: twilioTime(f.UpdatedAt),
		FriendlyName: f.FriendlyName, Status: string(f.Status), FactorType: "totp",
		Config:   factorConfig{Alg: string(f.Config.Alg), Skew: f.Config.Skew, CodeLength: f.Config.Digits, TimeStep: f.Config.Period},
		Metadata: map[string]any{},
		URL:      resourceURL(r, entityPath(app, f.Identity)+"/Factors/"+sid("YF", f.ID)),
	}
}

// challenge is Twilio's Challenge resource. A TOTP challenge is decided when it is made:
// it responded at once, and it never waits, so it expires when it was made.
type challenge struct {
	Sid             string            `json:"sid"`
	AccountSid      string            `json:"account_sid"`
	ServiceSid      string            `json:"service_sid"`
	EntitySid       string            `json:"entity_sid"`
	Identity        string            `json:"identity"`
	FactorSid       string            `json:"factor_sid"`
	DateCreated     string            `json:"date_created"`
	DateUpdated     string            `json:"date_updated"`
	DateResponded   string            `json:"date_responded"`
	ExpirationDate  string            `json:"expiration_date"`
	Status          string            `json:"status"`
	RespondedReason string            `json:"responded_reason"`
	Details         *struct{}         `json:"details"`
	HiddenDetails   *struct{}         `json:"hidden_details"`
	Metadata        *struct{}         `json:"metadata"`
	FactorType      string            `json:"factor_type"`
	URL             string            `json:"url"`
	Links           map[string]string `json:"links"`
}

func newChallenge(r *http.Request, app otp.App, c totp.Challenge) challenge {
	path := entityPath(app, c.Identity) + "/Challenges/" + sid("YC", c.ID)
	at := twilioTime(c.CreatedAt)
	return challenge{
		Sid: sid("YC", c.ID), AccountSid: accountSID(app), ServiceSid: apps.ServiceSID(app.ID), EntitySid: sid("YE", c.EntityID),
		Identity: c.Identity, FactorSid: sid("YF", c.FactorID), DateCreated: at, DateUpdated: at, DateResponded: at, ExpirationDate: at,
		Status: string(c.Status), RespondedReason: "none", FactorType: "totp", URL: resourceURL(r, path),
		Links: map[string]string{"notifications": resourceURL(r, path+"/Notifications")},
	}
}

// totpRoutes adds Entities, Factors and Challenges to the router of /Services/{ServiceSid}.
func totpRoutes(r chi.Router, d Deps) {
	if d.TOTP == nil {
		return
	}
	r.Method(http.MethodPost, "/Entities", handleEntityCreate(d))
	r.Method(http.MethodGet, "/Entities", handleEntityList(d))
	r.Method(http.MethodGet, "/Entities/{Identity}", handleEntityFetch(d))
	r.Method(http.MethodDelete, "/Entities/{Identity}", handleEntityDelete(d))
	r.Method(http.MethodPost, "/Entities/{Identity}/Factors", handleFactorCreate(d))
	r.Method(http.MethodGet, "/Entities/{Identity}/Factors", handleFactorList(d))
	r.Method(http.MethodGet, "/Entities/{Identity}/Factors/{Sid}", handleFactorFetch(d))
	r.Method(http.MethodPost, "/Entities/{Identity}/Factors/{Sid}", handleFactorUpdate(d))
	r.Method(http.MethodDelete, "/Entities/{Identity}/Factors/{Sid}", handleFactorDelete(d))
	r.Method(http.MethodPost, "/Entities/{Identity}/Challenges", handleChallengeCreate(d))
	r.Method(http.MethodGet, "/Entities/{Identity}/Challenges", handleChallengeList(d))
	r.Method(http.MethodGet, "/Entities/{Identity}/Challenges/{Sid}", handleChallengeFetch(d))
	r.Method(http.MethodPost, "/Entities/{Identity}/Challenges/{Sid}", handleChallengeUpdate(d))
}

// writeTOTPError answers err with Twilio's code for it, the domain's fields named as
// Twilio's parameters.
func writeTOTPError(w http.ResponseWriter, r *http.Request, d Deps, err error) {
	if errors.Is(err, totp.ErrUnverified) {
		e := restError{Code: codeFactorUnverified, Status: http.StatusForbidden, Message: "Factor is unverified: confirm it with a first code (update the Factor with AuthPayload)",
			MoreInfo: "https://www.twilio.com/docs/errors/60318"}
		writeJSON(w, e.Status, e)
		return
	}
	writeError(w, r, d.Logger, renamed(err, totpParams))
}

// noQuery refuses any query parameter on a call that takes none.
func noQuery(r *http.Request) error { return newParams(r.URL.Query()).err() }

func handleEntityCreate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := form(r); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		p := newParams(r.PostForm, "Identity")
		identity, ok := p.str("Identity")
		if !ok && !p.has("Identity") {
			p.fields["Identity"] = "is required"
		}
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		e, err := d.TOTP.CreateEntity(r.Context(), c.app.ID, identity)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusCreated, newEntity(r, c.app, e))
	})
}

func handleEntityList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		p := newParams(r.URL.Query(), pagingParams...)
		pr := readPage(p)
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		all, err := d.TOTP.Entities(r.Context(), c.app.ID)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		items, more := pageOf(all, pr)
		out := make([]entity, len(items))
		for i, e := range items {
			out[i] = newEntity(r, c.app, e)
		}
		writeJSON(w, http.StatusOK, struct {
			Entities []entity `json:"entities"`
			Meta     meta     `json:"meta"`
		}{out, newMeta(r, "/Services/"+apps.ServiceSID(c.app.ID)+"/Entities", "entities", pr, more, "")})
	})
}

func handleEntityFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := noQuery(r); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		e, err := d.TOTP.Entity(r.Context(), c.app.ID, chi.URLParam(r, "Identity"))
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusOK, newEntity(r, c.app, e))
	})
}

func handleEntityDelete(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := d.TOTP.DeleteEntity(r.Context(), c.app.ID, chi.URLParam(r, "Identity")); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// factorCreateParams are the parameters of creating a Factor, as Twilio defines them.
var factorCreateParams = []string{
	"FriendlyName", "FactorType", "Binding.Alg", "Binding.PublicKey", "Config.AppId", "Config.NotificationPlatform",
	"Config.NotificationToken", "Config.SdkVersion", "Binding.Secret", "Config.TimeStep", "Config.Skew", "Config.CodeLength",
	"Config.Alg", "Metadata",
}

// pushOnly are the Factor parameters of push and passkeys factors, which otpgate does not offer.
var pushOnly = []string{"Binding.Alg", "Binding.PublicKey", "Config.AppId", "Config.NotificationPlatform",
	"Config.NotificationToken", "Config.SdkVersion", "Metadata"}

// readConfig reads a TOTP factor's Config.* parameters over the defaults.
func readConfig(p *params) totp.Config {
	cfg := totp.DefaultConfig()
	if n, ok := p.integer("Config.TimeStep", totp.MinPeriod, totp.MaxPeriod); ok {
		cfg.Period = n
	}
	if n, ok := p.integer("Config.Skew", totp.MinSkew, totp.MaxSkew); ok {
		cfg.Skew = n
	}
	if n, ok := p.integer("Config.CodeLength", totp.MinDigits, totp.MaxDigits); ok {
		cfg.Digits = n
	}
	if s, ok := p.str("Config.Alg"); ok {
		switch a := totp.Algorithm(s); a {
		case totp.SHA1, totp.SHA256, totp.SHA512:
			cfg.Alg = a
		default:
			p.fields["Config.Alg"] = "must be sha1, sha256 or sha512"
		}
	}
	return cfg
}

func handleFactorCreate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := form(r); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		p := newParams(r.PostForm, factorCreateParams...)
		n := totp.NewFactor{Identity: chi.URLParam(r, "Identity")}
		switch typ, ok := p.str("FactorType"); {
		case !ok && !p.has("FactorType"):
			p.fields["FactorType"] = "is required"
		case ok && typ != "totp":
			p.fields["FactorType"] = "must be totp: push and passkeys factors are not supported by otpgate"
		}
		if name, ok := p.str("FriendlyName"); ok {
			n.FriendlyName = name
		} else if !p.has("FriendlyName") {
			p.fields["FriendlyName"] = "is required"
		}
		p.refuse("is a parameter of push and passkeys factors, which otpgate does not support", pushOnly...)
		n.Config = readConfig(p)
		if s, ok := p.str("Binding.Secret"); ok {
			if b, ok := totp.DecodeSecret(s); ok {
				n.Secret = b
			} else {
				p.fields["Binding.Secret"] = "must be 80 to 512 bits in base32"
			}
		}
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		en, err := d.TOTP.CreateFactor(r.Context(), c.app, n)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		out := newFactorAnswer{factor: newFactor(r, c.app, en.Factor)}
		out.Binding.Secret, out.Binding.URI = en.Secret, en.URI
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusCreated, out)
	})
}

func handleFactorList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		p := newParams(r.URL.Query(), pagingParams...)
		pr := readPage(p)
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		identity := chi.URLParam(r, "Identity")
		all, err := d.TOTP.Factors(r.Context(), c.app.ID, identity)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		items, more := pageOf(all, pr)
		out := make([]factor, len(items))
		for i, f := range items {
			out[i] = newFactor(r, c.app, f)
		}
		writeJSON(w, http.StatusOK, struct {
			Factors []factor `json:"factors"`
			Meta    meta     `json:"meta"`
		}{out, newMeta(r, entityPath(c.app, identity)+"/Factors", "factors", pr, more, "")})
	})
}

// factorID reads the {Sid} of a Factor's path; a sid of anything else finds nothing.
func factorID(r *http.Request) (string, error) { return sidParam(r, "YF") }

// sidParam is the id in the path's Sid of a resource whose SIDs start with prefix; a Sid
// that is not one is errNoResource, as Twilio answers it.
func sidParam(r *http.Request, prefix string) (string, error) {
	id, ok := apps.IDFromSID(chi.URLParam(r, "Sid"), prefix)
	if !ok {
		return "", errNoResource
	}
	return id, nil
}

func handleFactorFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := factorID(r)
		if err == nil {
			err = noQuery(r)
		}
		var f totp.Factor
		if err == nil {
			f, err = d.TOTP.Factor(r.Context(), c.app.ID, chi.URLParam(r, "Identity"), id)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusOK, newFactor(r, c.app, f))
	})
}

// handleFactorUpdate serves POST …/Factors/{Sid}: AuthPayload verifies the factor with a
// first code (a wrong one leaves it unverified, answered 200 as Twilio does), FriendlyName
// renames it; its Config cannot change once the authenticator holds it.
func handleFactorUpdate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := factorID(r)
		if err == nil {
			err = form(r)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		p := newParams(r.PostForm, "AuthPayload", "FriendlyName", "Config.NotificationToken", "Config.SdkVersion",
			"Config.TimeStep", "Config.Skew", "Config.CodeLength", "Config.Alg", "Config.NotificationPlatform")
		p.refuse("cannot change: the authenticator app holds the factor's settings; create a new factor", "Config.TimeStep", "Config.Skew",
			"Config.CodeLength", "Config.Alg")
		p.refuse("is a parameter of push factors, which otpgate does not support", "Config.NotificationToken", "Config.SdkVersion",
			"Config.NotificationPlatform")
		code, hasCode := p.str("AuthPayload")
		name, hasName := p.str("FriendlyName")
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		identity := chi.URLParam(r, "Identity")
		var f totp.Factor
		switch {
		case hasName:
			f, err = d.TOTP.RenameFactor(r.Context(), c.app.ID, identity, id, name)
		default:
			f, err = d.TOTP.Factor(r.Context(), c.app.ID, identity, id)
		}
		if err == nil && hasCode {
			f, _, err = d.TOTP.VerifyFactor(r.Context(), c.app.ID, identity, id, code)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusOK, newFactor(r, c.app, f))
	})
}

func handleFactorDelete(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := factorID(r)
		if err == nil {
			err = d.TOTP.DeleteFactor(r.Context(), c.app.ID, chi.URLParam(r, "Identity"), id)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

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
