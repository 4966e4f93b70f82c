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
