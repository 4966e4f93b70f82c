package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/events"
)

// Outbox payloads are built as JSON in SQL by internal/postgres (and its migrations) and from
// the Go types of internal/events by internal/inmem. decodePayload holds both to those
// types: every payload the suite claims is decoded strictly, so a field SQL names
// differently, leaves out or adds fails the suite.

// payloadOf is a new value of the Go type of typ's payload, and the fields typ must carry
// beyond those the type always has (its fields without omitempty).
func payloadOf(typ string) (any, []string, error) {
	switch typ {
	case events.VerificationCreated:
		return &events.VerificationData{}, []string{"send_id"}, nil
	case events.VerificationSent:
		return &events.VerificationData{}, []string{"send_id", "provider"}, nil
	case events.VerificationApproved, events.VerificationExpired:
		return &events.VerificationData{}, nil, nil
	case events.VerificationFailed:
		return &events.VerificationData{}, []string{"reason"}, nil
	case events.SendBlocked:
		return &events.BlockedData{}, nil, nil
	case events.FraudBlockStarted:
		return &events.FraudBlockData{}, nil, nil
	case events.FraudBlockEnded:
		return &events.FraudBlockData{}, []string{"ended_at"}, nil
	case events.BudgetThreshold:
		return &events.BudgetThresholdData{}, nil, nil
	}
	return nil, nil, fmt.Errorf("no payload type for event type %q", typ)
}

// decodePayload decodes ev's data into its type's Go value and returns it (a pointer):
// no field the type lacks, nothing after the object, every required field present and not
// null, times as events.Time writes them and ids as canonical UUIDs.
func decodePayload(ev events.Event) (any, error) {
	v, extra, err := payloadOf(ev.Type)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(ev.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("%s payload %s: %w", ev.Type, ev.Data, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s payload %s: more after the object", ev.Type, ev.Data)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(ev.Data, &fields); err != nil {
		return nil, fmt.Errorf("%s payload %s: %w", ev.Type, ev.Data, err)
	}
	for _, name := range append(requiredFields(reflect.TypeOf(v).Elem()), extra...) {
		if raw, ok := fields[name]; !ok || string(raw) == "null" {
			return nil, fmt.Errorf("%s payload %s: %q is missing", ev.Type, ev.Data, name)
		}
	}
	for name, raw := range fields {
		if err := checkValue(name, raw); err != nil {
			return nil, fmt.Errorf("%s payload %s: %w", ev.Type, ev.Data, err)
		}
	}
	return v, nil
}

// requiredFields names the JSON fields of struct type t that are always written: those
// without omitempty.
func requiredFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		optional := slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" })
		if name != "-" && name != "" && !optional {
			out = append(out, name)
		}
	}
	return out
}

// checkValue holds times and ids to the one form receivers get from either store.
func checkValue(name string, raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	switch {
	case strings.HasSuffix(name, "_at"):
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || events.Time(t) != s {
			return fmt.Errorf("%q is %q, want a time as events.Time writes it", name, s)
		}
	case strings.HasSuffix(name, "_id"):
		if u, err := uuid.Parse(s); err != nil || u.String() != s {
			return fmt.Errorf("%q is %q, want a UUID in canonical form", name, s)
		}
	}
	return nil
}
