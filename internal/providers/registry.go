package providers

import (
	"fmt"
	"slices"
	"strings"
)

// Kinds is the registry: every kind of provider, in the order messages list them. A new
// provider is one file that declares its Kind and one line here.
func Kinds() []Kind {
	return []Kind{
		logKind(),
		webhookKind(),
		twilioKind(),
		telnyxKind(),
		infobipKind(),
		snsKind(),
		vonageKind(),
		plivoKind(),
		sinchKind(),
		smtpKind(),
	}
}

// Lookup finds a kind by name.
func Lookup(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// Choices names the kinds that can carry channel (every kind when channel is empty) as
// a message lists them: "log, webhook or twilio".
func Choices(channel string) string {
	var names []string
	for _, k := range Kinds() {
		if channel == "" || slices.Contains(k.Channels, channel) {
			names = append(names, k.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Build makes the instance that s describes.
func Build(s Settings, o Options) (Built, error) {
	b, err := s.kind.New(s, o)
	if err != nil {
		return Built{}, err
	}
	b.Name = s.Name
	if b.Channels == nil {
		b.Channels = slices.Clone(s.kind.Channels)
	}
	if b.Sender == nil {
		return Built{}, fmt.Errorf("provider %s: kind %s built no sender", s.Name, s.Kind)
	}
	return b, nil
}
