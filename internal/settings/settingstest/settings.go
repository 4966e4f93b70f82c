package settingstest

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/settings"
	"otpgate/internal/storetest/fixture"
)

// testSettings holds both stores to the one settings statement: any name is a setting,
// seeded once, changed under a lock with its audit entry, each name versioned on its own.
func testSettings(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	const name = "storetest"
	store := func(e *fixture.Env) settings.Store { return e.Store }
	change := history.AdminAction{Action: "storetest_changed", Target: "storetest:config", Detail: "by test"}

	t.Run("ANameNeverWrittenIsNoDocumentAtVersion0", func(t *testing.T) {
		e := fixture.New(t, newStore)
		doc, v, err := store(e).Setting(e.Ctx, name)
		if err != nil || doc != nil || v != 0 {
			t.Fatalf("got %s at %d, %v; want nothing at 0", doc, v, err)
		}
		if ok, err := store(e).SeedSetting(e.Ctx, name, []byte(`{"a":"1"}`)); !ok || err != nil {
			t.Fatalf("first seed: got %v, %v; want stored", ok, err)
		}
		if ok, err := store(e).SeedSetting(e.Ctx, name, []byte(`{"a":"2"}`)); ok || err != nil {
			t.Errorf("second seed: got %v, %v; want nothing stored", ok, err)
		}
		if doc, v, err := store(e).Setting(e.Ctx, name); err != nil || !fixture.JSONEqual(doc, []byte(`{"a":"1"}`)) || v != 0 {
			t.Errorf("got %s at %d, %v; want the first seed at 0", doc, v, err)
		}
	})

	t.Run("ChangesAreVersionedPerNameAndAudited", func(t *testing.T) {
		e := fixture.New(t, newStore)
		other, _ := store(e).SettingVersion(e.Ctx, "storetest_other")
		for i := range 3 {
			v, err := store(e).UpdateSetting(e.Ctx, name, func([]byte) ([]byte, history.AdminAction, error) {
				return []byte(`{"n":` + string(rune('1'+i)) + `}`), change, nil
			})
			if err != nil || v != int64(i+1) {
				t.Fatalf("change %d: got version %d, %v; want %d", i, v, err, i+1)
			}
		}
		if v, err := store(e).SettingVersion(e.Ctx, name); err != nil || v != 3 {
			t.Errorf("version: got %d, %v; want 3", v, err)
		}
		if v, _ := store(e).SettingVersion(e.Ctx, "storetest_other"); v != other {
			t.Errorf("another name: got version %d, want %d unchanged", v, other)
		}
		if acts, _ := e.Store.AdminActions(e.Ctx, 10); len(acts) != 3 || acts[0].Action != change.Action {
			t.Errorf("audit: got %+v, want the three changes", acts)
		}
	})

	t.Run("ChangesAtOnceEachSeeTheOther", func(t *testing.T) {
		e := fixture.New(t, newStore)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := store(e).UpdateSetting(e.Ctx, name, func(stored []byte) ([]byte, history.AdminAction, error) {
					n, _ := strconv.Atoi(string(stored)) // nil counts 0
					return []byte(strconv.Itoa(n + 1)), change, nil
				})
				if err != nil {
					t.Errorf("UpdateSetting: %v", err)
				}
			})
		}
		wg.Wait()
		if doc, v, _ := store(e).Setting(e.Ctx, name); v != 8 || string(doc) != "8" {
			t.Errorf("got %s at %d; want every change counted on the one before: 8 at 8", doc, v)
		}
	})

	t.Run("ARefusedOrUnkeepableDocumentChangesNothing", func(t *testing.T) {
		e := fixture.New(t, newStore)
		refusal := &otp.ErrInvalidRequest{Fields: map[string]string{"n": "bad"}}
		_, err := store(e).UpdateSetting(e.Ctx, name, func([]byte) ([]byte, history.AdminAction, error) {
			return nil, history.AdminAction{}, refusal
		})
		if !errors.Is(err, refusal) {
			t.Errorf("got %v, want the refusal as it is", err)
		}
		for what, doc := range map[string]string{"NUL": `{"a":"a\u0000b"}`, "InvalidUTF8": "{\"a\":\"a\xffb\"}"} {
			_, err := store(e).UpdateSetting(e.Ctx, name, func([]byte) ([]byte, history.AdminAction, error) {
				return []byte(doc), change, nil
			})
			fixture.WantInvalidText(t, "UpdateSetting with "+what, err)
			_, err = store(e).SeedSetting(e.Ctx, name, []byte(doc))
			fixture.WantInvalidText(t, "SeedSetting with "+what, err)
		}
		if doc, v, err := store(e).Setting(e.Ctx, name); err != nil || doc != nil || v != 0 {
			t.Errorf("got %s at %d, %v; want nothing changed", doc, v, err)
		}
		fixture.WantAudits(t, e, 0)
	})
}
