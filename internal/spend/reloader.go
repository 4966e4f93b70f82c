package spend

import (
	"log/slog"

	"otpgate/internal/settings"
)

// DefaultPoll is how often a Reloader compares the store's version with its own when no
// change notice arrives (settings.DefaultPoll).
const DefaultPoll = settings.DefaultPoll

// Reloader holds the running snapshot of the spend configuration (the live setting
// SettingName) in a settings.Reloader, which swaps it when the version moves. Readers call
// Snapshot, which never blocks.
type Reloader struct {
	*settings.Reloader[*Snapshot]
	defaults Config
}

// NewReloader returns a reloader over store; defaults is the configuration of a store that
// holds none. notifier may be nil (polling only).
func NewReloader(store Store, notifier settings.Notifier, defaults Config, log *slog.Logger) *Reloader {
	decode := func(doc []byte, version int64) *Snapshot {
		c := defaults
		if doc != nil {
			var err error
			if c, err = DecodeConfig(doc); err != nil {
				// Written by a newer version, say: keep serving with the defaults, loudly.
				log.Error("spend config: the stored configuration is not valid; the defaults apply", "err", err)
				c = defaults
			}
		}
		return NewSnapshot(c, version)
	}
	src := settings.Stored(store, SettingName, decode)
	src.Name = "spend config"
	return &Reloader{Reloader: settings.New(src, NewSnapshot(defaults, -1), notifier, log), defaults: defaults}
}

// Defaults returns the configuration of a store that holds none.
func (r *Reloader) Defaults() Config { return r.defaults }
