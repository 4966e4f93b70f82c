// Package apps owns apps' keys and administration: the key type and its secrets, the
// authorization of a caller (Authorize), the Directory the public APIs find apps and
// authenticate keys through, the Store apps and keys are kept in, patches, the audited
// admin service and the Twilio SID helpers. The registry every instance keeps as an
// immutable snapshot, swapped atomically whenever the stored configuration changes,
// implements Directory; Admin implements AdminService over a Store. The app's settings
// that sends and checks read (otp.App) stay in the domain.
package apps

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/settings"
)

// Defaults of a Registry.
const (
	// DefaultPollInterval is how often Run asks the store for its version: every change
	// reaches every instance within about this long, plus one load.
	DefaultPollInterval = time.Second
	// touchEvery is the most often one key's last-used time is written, per instance.
	touchEvery = time.Minute
	// touchQueue bounds the last-used times waiting to be written; more are dropped.
	touchQueue = 1024
)

// snapshot is one consistent view of the configuration; it is never changed once made.
type snapshot struct {
	apps map[string]otp.App
	keys map[string]Key
	// defaultApp is the registry's default app with its test numbers.
	defaultApp otp.App
}

// Registry serves apps and authenticates keys from a snapshot of the store, which a
// settings.Reloader keeps: Reload replaces it and Run keeps it current. It implements
// Directory.
type Registry struct {
	store      Store
	defaultApp otp.App
	log        *slog.Logger
	live       *settings.Reloader[*snapshot]

	// touched holds the last time each key's use was queued; touches feeds Run.
	touched sync.Map // key id → time.Time
	touches chan touch

	// PollInterval is how often Run checks the store's version.
	PollInterval time.Duration
	// Timeout bounds one store call of Run.
	Timeout time.Duration
	// Now is the registry's clock; tests replace it.
	Now func() time.Time
	// Sealer opens test numbers' codes, and seals them for Admin; without one, apps have
	// no test numbers. Set it while wiring, before the first Reload.
	Sealer *CodeSealer
}

type touch struct {
	id string
	at time.Time
}

var _ Directory = (*Registry)(nil)

// NewRegistry returns a registry serving defaultApp (from the environment, its browser
// settings normalised as Validate does) and the apps of store; call Reload before serving
// and Run to keep it current.
func NewRegistry(store Store, defaultApp otp.App, log *slog.Logger) *Registry {
	defaultApp = normalBrowser(defaultApp)
	r := &Registry{
		store: store, defaultApp: defaultApp, log: log, touches: make(chan touch, touchQueue),
		PollInterval: DefaultPollInterval, Timeout: 2 * time.Second,
		Now: func() time.Time { return time.Now().UTC() },
	}
	src := settings.Source[*snapshot]{Name: "apps", Load: r.load,
		Version: func(ctx context.Context) (int64, error) { return store.SettingVersion(ctx, SettingName) }}
	r.live = settings.New(src, &snapshot{apps: map[string]otp.App{}, keys: map[string]Key{}, defaultApp: defaultApp}, nil, log)
	r.live.Every = func(ctx context.Context, _ int) { r.flushTouches(ctx) }
	return r
}

// DefaultApp is the app built from the environment.
func (r *Registry) DefaultApp() otp.App { return r.defaultApp }

// Apps are the default app and then every app of the current snapshot by id.
func (r *Registry) Apps() []otp.App {
	s := r.live.Snapshot()
	out := make([]otp.App, 0, len(s.apps)+1)
	out = append(out, s.defaultApp)
	for _, a := range s.apps {
		out = append(out, a)
	}
	slices.SortFunc(out[1:], func(a, b otp.App) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Version is the store version the current snapshot was read at; -1 before the first load.
func (r *Registry) Version() int64 { return r.live.Version() }

// Reload reads the store and swaps the snapshot when the store has another version.
// Errors wrap otp.ErrUnavailable when the store could not be read; the old snapshot stays.
func (r *Registry) Reload(ctx context.Context) error { return r.live.Load(ctx) }

// load reads the store into a snapshot.
func (r *Registry) load(ctx context.Context) (*snapshot, int64, error) {
	set, err := r.store.LoadApps(ctx)
	if err != nil {
		return nil, 0, err
	}
	s := &snapshot{apps: make(map[string]otp.App, len(set.Apps)), keys: make(map[string]Key, len(set.Keys)),
		defaultApp: r.defaultApp}
	for _, a := range set.Apps {
		s.apps[a.ID] = a
	}
	for _, k := range set.Keys {
		s.keys[k.ID] = k
	}
	r.addTestNumbers(s, set.TestNumbers)
	return s, set.Version, nil
}

// addTestNumbers opens the codes of the test numbers and gives each app its own, so the
// send path reads them without a query. A code this secret cannot open is skipped.
func (r *Registry) addTestNumbers(s *snapshot, list []TestNumber) {
	if r.Sealer == nil {
		return
	}
	byApp := map[string]map[string]otp.TestNumber{}
	for _, t := range list {
		code, err := r.Sealer.Open(t.ID, t.Sealed)
		if err != nil {
			r.log.Warn("apps: test number skipped", "app_id", t.AppID, "test_number", t.ID, "err", err)
			continue
		}
		if byApp[t.AppID] == nil {
			byApp[t.AppID] = map[string]otp.TestNumber{}
		}
		byApp[t.AppID][t.Address] = otp.TestNumber{ID: t.ID, Address: t.Address, Code: code, ExpiresAt: t.ExpiresAt}
	}
	for id, numbers := range byApp {
		if id == otp.DefaultAppID {
			s.defaultApp.TestNumbers = numbers
		} else if app, ok := s.apps[id]; ok {
			app.TestNumbers = numbers
			s.apps[id] = app
		}
	}
}

// App implements Directory.
func (r *Registry) App(_ context.Context, id string) (otp.App, error) {
	id, ok := otp.CanonAppID(id)
	switch {
	case !ok:
		return otp.App{}, otp.ErrNotFound
	case id == otp.DefaultAppID:
		return r.live.Snapshot().defaultApp, nil
	}
	a, found := r.live.Snapshot().apps[id]
	if !found {
		return otp.App{}, otp.ErrNotFound
	}
	return a, nil
}

// Authenticate implements Directory. The secret is compared by its SHA-256
// with subtle.ConstantTimeCompare; an unknown key costs the same hash, so timing does
// not tell unknown ids from wrong secrets either. Each use queues the key's last-used
// time at most once a minute; Run writes it.
func (r *Registry) Authenticate(_ context.Context, keyID, secret string) (Key, error) {
	sum := sha256.Sum256([]byte(secret))
	k, found := r.live.Snapshot().keys[keyID]
	want := k.Hash
	if !found || len(want) != sha256.Size {
		want = make([]byte, sha256.Size)
	}
	if subtle.ConstantTimeCompare(sum[:], want) != 1 || !found || k.Revoked() || secret == "" {
		return Key{}, ErrBadKey
	}
	r.noteUse(k.ID)
	return k, nil
}

// noteUse queues a key's use for the store, at most once per touchEvery, never blocking.
func (r *Registry) noteUse(id string) {
	now := r.Now()
	if last, ok := r.touched.Load(id); ok && now.Sub(last.(time.Time)) < touchEvery {
		return
	}
	r.touched.Store(id, now)
	select {
	case r.touches <- touch{id: id, at: now.Truncate(time.Second)}:
	default: // the writer is behind: the next minute's use will tell
	}
}

// Run keeps the snapshot current until ctx ends: it polls the store's version every
// PollInterval and reloads when it moved (see settings.Reloader), and writes queued
// last-used times after every poll and once more at the end.
func (r *Registry) Run(ctx context.Context) error {
	r.live.Poll, r.live.Timeout = r.PollInterval, r.Timeout
	err := r.live.Run(ctx)
	r.flushTouches(context.WithoutCancel(ctx))
	return err
}

// flushTouches writes the queued last-used times in one call.
func (r *Registry) flushTouches(ctx context.Context) {
	used := map[string]time.Time{}
	for len(used) < touchQueue {
		select {
		case t := <-r.touches:
			used[t.id] = t.at
			continue
		default:
		}
		break
	}
	if len(used) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	if err := r.store.TouchKeys(ctx, used); err != nil && !errors.Is(err, context.Canceled) {
		r.log.Warn("apps: recording key use failed", "keys", len(used), "err", err)
	}
}

// Directory finds apps and authenticates their keys for the public APIs, from a
// snapshot of the configuration that every instance keeps current; *Registry
// implements it.
type Directory interface {
	// App returns the app with the id (see otp.CanonAppID for the ids URLs use).
	// Errors: otp.ErrNotFound, also for a deleted app.
	App(ctx context.Context, id string) (otp.App, error)
	// Authenticate returns the live key with the id whose secret is secret, comparing
	// in constant time. Errors: ErrBadKey for an unknown, revoked or wrong key.
	Authenticate(ctx context.Context, keyID, secret string) (Key, error)
}
