package providers_test

import (
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/delivery"
	"otpgate/internal/otp"
	"otpgate/internal/providers"
)

// examples is the environment in which every setting of k has its example value, as
// instance in reads it.
func examples(k providers.Kind, in providers.Instance) map[string]string {
	env := map[string]string{}
	for _, v := range k.Settings {
		if v.Example != "" {
			env[v.Name+in.EnvSuffix()] = v.Example
		}
	}
	return env
}

var settingName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*[A-Z0-9]$`)

// TestKinds holds every registered kind to the registry's contract: it declares its
// channels, its settings and its constructor, builds from its settings alone under any
// instance name, and its receipt reader comes from the table.
func TestKinds(t *testing.T) {
	kinds := providers.Kinds()
	if len(kinds) == 0 {
		t.Fatal("no kinds registered")
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		t.Run(k.Name, func(t *testing.T) {
			if !delivery.ValidName(k.Name) || seen[k.Name] {
				t.Errorf("name %q: want a valid instance name, once", k.Name)
			}
			seen[k.Name] = true
			if got, ok := providers.Lookup(k.Name); !ok || got.Name != k.Name {
				t.Errorf("Lookup(%q): got %q, %v", k.Name, got.Name, ok)
			}
			if len(k.Channels) == 0 || slices.ContainsFunc(k.Channels, func(c string) bool { return !slices.Contains(otp.Channels(), c) }) {
				t.Errorf("channels: got %v, want some of %v", k.Channels, otp.Channels())
			}
			if k.New == nil {
				t.Fatal("no constructor")
			}
			names := map[string]bool{}
			for _, v := range k.Settings {
				if !settingName.MatchString(v.Name) || names[v.Name] {
					t.Errorf("setting %q: want an upper-case variable name, once", v.Name)
				}
				names[v.Name] = true
				if v.Required && v.Example == "" {
					t.Errorf("setting %s: required, but has no example to build with", v.Name)
				}
			}

			for _, in := range []providers.Instance{{Name: k.Name, Kind: k.Name}, {Name: "alt", Kind: k.Name}} {
				env := examples(k, in)
				s, err := providers.Read(in, func(name string) string { return env[name] })
				if err != nil {
					t.Fatalf("%s: read: %v", in.Name, err)
				}
				b, err := providers.Build(s, providers.Options{
					Log: slog.New(slog.DiscardHandler), Timeout: time.Second, PublicURL: "https://otp.example.com",
				})
				if err != nil {
					t.Fatalf("%s: build: %v", in.Name, err)
				}
				if b.Name != in.Name || b.Sender == nil || b.Sender.Name() != in.Name {
					t.Errorf("%s: got provider %q with sender %v, want both named %s", in.Name, b.Name, b.Sender, in.Name)
				}
				if len(b.Channels) == 0 || slices.ContainsFunc(b.Channels, func(c string) bool { return !slices.Contains(k.Channels, c) }) {
					t.Errorf("%s: carries %v, want some of its kind's %v", in.Name, b.Channels, k.Channels)
				}
				if (b.Receipts != nil) != k.Receipts {
					t.Errorf("%s: receipt reader %v, want one: %v", in.Name, b.Receipts, k.Receipts)
				}
			}
		})

		t.Run(k.Name+"/EachRequiredVariableIsNamed", func(t *testing.T) {
			in := providers.Instance{Name: "alt", Kind: k.Name}
			for _, v := range k.Settings {
				if !v.Required {
					continue
				}
				env := examples(k, in)
				delete(env, v.Name+"_ALT")
				_, err := providers.Read(in, func(name string) string { return env[name] })
				want := v.Name + "_ALT is required with provider alt (" + k.Name + ")"
				if err == nil || err.Error() != want {
					t.Errorf("without %s_ALT: got %v, want %s", v.Name, err, want)
				}
			}
		})

		t.Run(k.Name+"/AnInstanceReadsOnlyItsOwnSuffix", func(t *testing.T) {
			named := examples(k, providers.Instance{Name: k.Name, Kind: k.Name})
			s, err := providers.Read(providers.Instance{Name: "alt", Kind: k.Name}, func(name string) string { return named[name] })
			if needs := slices.ContainsFunc(k.Settings, func(v providers.Setting) bool { return v.Required }); needs != (err != nil) {
				t.Errorf("alt with only the unsuffixed variables set: got %v, want an error: %v", err, needs)
			}
			for _, v := range k.Settings {
				if got := s.Get(v.Name); got != v.Default {
					t.Errorf("%s: alt read %q from the unsuffixed variable, want its default %q", v.Name, got, v.Default)
				}
			}
		})
	}
}

func TestChoices(t *testing.T) {
	for _, c := range []struct{ channel, want string }{
		{"", "log, webhook, twilio, telnyx, infobip, sns, vonage, plivo, sinch or smtp"},
		{otp.ChannelSMS, "log, webhook, twilio, telnyx, infobip, sns, vonage, plivo or sinch"},
		{otp.ChannelVoice, "log or twilio"},
		{otp.ChannelEmail, "log or smtp"},
		{"fax", ""},
	} {
		if got := providers.Choices(c.channel); got != c.want {
			t.Errorf("%q: got %q, want %q", c.channel, got, c.want)
		}
	}
}

// TestSettingsAreDocumented holds docs/delivery.md's list of instance variables
// (NAME_<NAME>) equal to the settings the kinds declare.
func TestSettingsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/delivery.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]*)_<NAME>`").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	var declared []string
	for _, k := range providers.Kinds() {
		for _, v := range k.Settings {
			declared = append(declared, v.Name)
		}
	}
	slices.Sort(documented)
	slices.Sort(declared)
	if !slices.Equal(slices.Compact(documented), declared) {
		t.Errorf("docs/delivery.md lists %s; the kinds declare %s", strings.Join(documented, ", "), strings.Join(declared, ", "))
	}
}
