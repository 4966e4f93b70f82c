package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/metrics"
	"otpgate/internal/notify"
	"otpgate/internal/otp"
	"otpgate/internal/ratelimit"
)

// FraudSettings are the OTP_* variables of the fraud guard: the settings a fresh database
// starts from (internal/fraud.Defaults has the same defaults; a test holds them equal).
// Once the database holds settings, the console and the admin API change them, not these.
type FraudSettings struct {
	LimitCountry      fraud.CountryRules `env:"OTP_LIMIT_COUNTRY"`
	LimitPrefix       fraud.Rules        `env:"OTP_LIMIT_PREFIX"`
	LimitIPNet        fraud.Rules        `env:"OTP_LIMIT_IP_NET"`
	PrefixDrop        int                `env:"OTP_PREFIX_DROP" envDefault:"4"`
	FraudGuard        fraud.Mode         `env:"OTP_FRAUD_GUARD" envDefault:"enforce"`
	FraudBlock        fraud.Span         `env:"OTP_FRAUD_BLOCK" envDefault:"12h"`
	FraudShortHorizon fraud.Span         `env:"OTP_FRAUD_SHORT_HORIZON" envDefault:"10m"`
	FraudLongHorizon  fraud.Span         `env:"OTP_FRAUD_LONG_HORIZON" envDefault:"7d"`
	FraudRatio        float64            `env:"OTP_FRAUD_RATIO" envDefault:"0.3"`
	FraudPriorRate    float64            `env:"OTP_FRAUD_PRIOR_RATE" envDefault:"0.6"`
	FraudPriorWeight  float64            `env:"OTP_FRAUD_PRIOR_WEIGHT" envDefault:"20"`
	FraudFloorCountry int                `env:"OTP_FRAUD_FLOOR_COUNTRY" envDefault:"100"`
	FraudFloorPrefix  int                `env:"OTP_FRAUD_FLOOR_PREFIX" envDefault:"10"`
	FraudFloorIPNet   int                `env:"OTP_FRAUD_FLOOR_IP_NET" envDefault:"10"`

	FraudSurge                 float64    `env:"OTP_FRAUD_SURGE" envDefault:"10"`
	FraudVolumeFloor           int        `env:"OTP_FRAUD_VOLUME_FLOOR" envDefault:"30"`
	FraudFloorYoungCountries   int        `env:"OTP_FRAUD_FLOOR_YOUNG_COUNTRIES" envDefault:"20"`
	FraudYoungApprovals        int        `env:"OTP_FRAUD_YOUNG_APPROVALS" envDefault:"5"`
	FraudCountriesPerNetwork   int        `env:"OTP_FRAUD_COUNTRIES_PER_NETWORK" envDefault:"3"`
	FraudBlockPass             int        `env:"OTP_FRAUD_BLOCK_PASS" envDefault:"3"`
	FraudMinApprovalDelay      fraud.Span `env:"OTP_FRAUD_MIN_APPROVAL_DELAY" envDefault:"800ms"`
	FraudFastApprovalWeight    float64    `env:"OTP_FRAUD_FAST_APPROVAL_WEIGHT" envDefault:"0.25"`
	FraudForeignApprovalWeight float64    `env:"OTP_FRAUD_FOREIGN_APPROVAL_WEIGHT" envDefault:"0.5"`
}

// fraudDefaults is the fraud configuration of the environment.
func (s FraudSettings) fraudDefaults() fraud.Config {
	return fraud.Config{
		Country: s.LimitCountry, Prefix: s.LimitPrefix, IPNet: s.LimitIPNet, PrefixDrop: s.PrefixDrop,
		Mode: s.FraudGuard, Block: s.FraudBlock, ShortHorizon: s.FraudShortHorizon, LongHorizon: s.FraudLongHorizon,
		Ratio: s.FraudRatio, PriorRate: s.FraudPriorRate, PriorWeight: s.FraudPriorWeight,
		FloorCountry: s.FraudFloorCountry, FloorPrefix: s.FraudFloorPrefix, FloorIPNet: s.FraudFloorIPNet,
		Surge: s.FraudSurge, VolumeFloor: s.FraudVolumeFloor, CountriesPerNetwork: s.FraudCountriesPerNetwork,
		FloorYoungCountries: s.FraudFloorYoungCountries, YoungApprovals: s.FraudYoungApprovals,
		BlockPass: s.FraudBlockPass, MinApprovalDelay: s.FraudMinApprovalDelay,
		FastApprovalWeight: s.FraudFastApprovalWeight, ForeignApprovalWeight: s.FraudForeignApprovalWeight,
	}
}

// checkFraud applies the fraud package's one validator to the environment's values, naming
// the variable of each bad one.
func (s FraudSettings) checkFraud() error {
	c := s.fraudDefaults()
	fields, ok := invalidFields(c.Validate())
	if !ok {
		return nil
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	name := names[0]
	return fmt.Errorf("config: %s=%s: %s", fraud.EnvName(name), c.Values()[name], fields[name])
}

// invalidFields returns the fields of an *otp.ErrInvalidRequest.
func invalidFields(err error) (map[string]string, bool) {
	var inv *otp.ErrInvalidRequest
	if !errors.As(err, &inv) || len(inv.Fields) == 0 {
		return nil, false
	}
	return inv.Fields, true
}

// fraudParts are the fraud guard's running pieces.
type fraudParts struct {
	reloader *fraud.Reloader
	// guard is the fraud step of the service, counted by metrics.
	guard otp.Fraud
	admin fraud.AdminService
}

// fraudLoadTimeout bounds the first load of the fraud configuration at start.
const fraudLoadTimeout = 10 * time.Second

// newFraud builds the fraud guard over the store, the limiter and Redis pub/sub, and loads
// its configuration: a fresh database gets the environment's. It runs nothing yet.
func newFraud(ctx context.Context, cfg config, p *parts, rl *ratelimit.Limiter, mx *metrics.Metrics, log *slog.Logger) (*fraudParts, error) {
	log = log.With("component", "fraud")
	notifier := notify.New(p.redis, cfg.RedisPrefix+"fraud:changed")
	r := fraud.NewReloader(p.store, notifier, cfg.fraudDefaults(), log)
	lctx, cancel := context.WithTimeout(ctx, fraudLoadTimeout)
	defer cancel()
	if err := r.Load(lctx); err != nil {
		return nil, err
	}
	mx.FraudBlocks(func() []metrics.BlockCount {
		var out []metrics.BlockCount
		for _, b := range r.ActiveBlocks() {
			out = append(out, metrics.BlockCount{Scope: b.Scope, Mode: string(b.Mode), Count: b.Count})
		}
		return out
	})
	return &fraudParts{
		reloader: r,
		guard:    mx.Fraud(fraud.NewGuard(r, rl, p.store, log)),
		admin:    fraud.NewAdmin(p.store, r, rl),
	}, nil
}
