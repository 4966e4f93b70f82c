package historytest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/storetest/fixture"
)

// testErase erases one person's number from a seeded history with events: the person's
// verifications, sends (refused ones too), attempts and events are gone and the audit
// entries naming the number name the redaction; everybody else's rows are as they were.
func testErase(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	e := fixture.New(t, newStore)
	eraser, ok := e.Store.(history.EraseStore)
	if !ok {
		t.Fatalf("%T does not implement history.EraseStore", e.Store)
	}
	e.Subscribe(otp.DefaultAppID)
	const gone, kept = "+819000000001", "+819000000002"
	if err := e.Store.RecordAdminAction(e.Ctx, history.AdminAction{Action: history.ActionLimitReset, Target: "phone:" + gone}); err != nil {
		t.Fatal(err)
	}
	s := seedHistory(e)
	// Blocks tripped by a send to each number, as versions before masking wrote them.
	blocks := map[string]string{}
	for _, phone := range []string{gone, kept} {
		b := fraud.Block{ID: fixture.NewID(), Scope: rate.ScopePrefix, Target: phone[:8], Mode: fraud.ModeEnforce,
			Reason: "12 unapproved sends; " + fraud.TrippedBy(phone) + "192.0.2.1", StartedAt: fixture.Base(), EndsAt: fixture.Base().Add(time.Hour)}
		a := history.AdminAction{Action: fraud.ActionBlockStarted, Target: b.Scope + ":" + b.Target, Detail: "enforce block: " + b.Reason}
		if err := e.Store.RecordFraudBlock(e.Ctx, b, a); err != nil {
			t.Fatal(err)
		}
		blocks[phone] = b.ID
	}
	byPhone := func(phone string) []history.SendRow {
		rows, _ := e.List(history.SendFilter{Phone: phone})
		return rows
	}
	keptBefore := fixture.IDs(byPhone(kept))
	if len(byPhone(gone)) != 2 || len(keptBefore) != 2 {
		t.Fatalf("seeded %d sends of %s and %d of %s, want 2 each", len(byPhone(gone)), gone, len(keptBefore), kept)
	}

	got, err := eraser.EraseAddress(e.Ctx, gone, "phone:+819*******01", history.AdminAction{Action: history.ActionSubjectErased, Target: "phone:+819*******01"})
	if err != nil {
		t.Fatalf("EraseAddress: %v", err)
	}
	if got.Verifications != 1 || got.Sends != 2 || got.Attempts != 1 || got.Events == 0 || got.AuditEntries != 2 || got.FraudBlocks != 1 {
		t.Errorf("erased %+v, want 1 verification, 2 sends, 1 attempt, its events, 2 audit entries and 1 fraud block", got)
	}
	all, err := e.Store.FraudBlocks(e.Ctx, fraud.BlockFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		switch b.ID {
		case blocks[gone]:
			if want := "12 unapproved sends; " + fraud.TrippedBy("+819*******01") + "192.0.2.1"; b.Reason != want {
				t.Errorf("block tripped by %s: reason %q, want %q", gone, b.Reason, want)
			}
		case blocks[kept]:
			if !strings.Contains(b.Reason, fraud.TrippedBy(kept)) {
				t.Errorf("block tripped by %s: reason %q, want it untouched", kept, b.Reason)
			}
		}
	}
	if rows := byPhone(gone); len(rows) != 0 {
		t.Errorf("history of %s after erasure: %+v, want none", gone, rows)
	}
	if _, err := e.Store.VerificationDetail(e.Ctx, s.verification); !errors.Is(err, otp.ErrNotFound) {
		t.Errorf("erased verification: got %v, want ErrNotFound", err)
	}
	if after := fixture.IDs(byPhone(kept)); strings.Join(after, ",") != strings.Join(keptBefore, ",") {
		t.Errorf("sends of %s: got %v, want %v untouched", kept, after, keptBefore)
	}
	evs := e.Drain(fixture.Base().Add(time.Hour))
	var others int
	for _, ev := range evs {
		if strings.Contains(string(ev.Data), gone[1:]) {
			t.Errorf("event %s %s survived the erasure: %s", ev.Type, ev.ID, ev.Data)
		}
		if strings.Contains(string(ev.Data), kept[1:]) {
			others++
		}
	}
	if others == 0 {
		t.Errorf("no event of %s is left among %d: the erasure took other people's", kept, len(evs))
	}
	log, err := e.Store.AuditLog(e.Ctx, history.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var erased, keptDetail bool
	for _, a := range log {
		keptDetail = keptDetail || strings.Contains(a.Detail, kept[1:])
		if strings.Contains(a.Target+a.Detail, gone[1:]) {
			t.Errorf("audit entry %+v still names the number", a)
		}
		erased = erased || a.Action == history.ActionSubjectErased
	}
	if !erased || !keptDetail {
		t.Errorf("audit log %+v: want the entry of the erasure, and the other block's untouched", log)
	}

	again, err := eraser.EraseAddress(e.Ctx, gone, "phone:+819*******01", history.AdminAction{Action: history.ActionSubjectErased, Target: "phone:+819*******01"})
	if err != nil || again != (history.Erased{}) {
		t.Errorf("second erasure: got %+v, %v, want nothing left to erase", again, err)
	}
}
