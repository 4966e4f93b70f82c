package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// testAddresses: whatever a store keeps of a phone number or email address (the
// production store keeps it indexed and sealed), every read gives back the address, and
// every lookup and filter by it finds its rows.
func testAddresses(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ReadsGiveBackTheAddressAndLookupsFindIt", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Subscribe(otp.DefaultAppID, events.VerificationCreated, events.SendBlocked)
		const phone, mail = "+819077770001", "ana.pii@example.com"
		p := fixture.Params(phone, "111111", fixture.Base())
		v := e.Send(p).Verification
		pm := fixture.Params(mail, "222222", fixture.Base().Add(time.Second))
		pm.Channel = otp.ChannelEmail
		vm := e.Send(pm).Verification
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: phone, ClientIP: "192.0.2.1", Status: otp.SendBlocked,
			Reason: "phone 1/1m", Time: fixture.Base().Add(2 * time.Second)})
		e.MustFlush()
		if v.Address != phone || vm.Address != mail {
			t.Errorf("BeginSend: got %q and %q, want %q and %q", v.Address, vm.Address, phone, mail)
		}
		if got, err := e.Store.Verification(e.Ctx, v.ID); err != nil || got.Address != phone {
			t.Errorf("Verification: got %q, %v; want %q", got.Address, err, phone)
		}
		if got, err := e.Store.Newest(e.Ctx, otp.DefaultAppID, mail); err != nil || got.ID != vm.ID || got.Address != mail {
			t.Errorf("Newest(%s): got %+v, %v; want %s", mail, got, err, vm.ID)
		}
		if got, oc := e.Check(vm.ID, "222222", fixture.Base().Add(3*time.Second)); oc != otp.OutcomeApproved || got.Address != mail {
			t.Errorf("Check: got %q %s, want %q approved", got.Address, oc, mail)
		}
		rows, _ := e.List(history.SendFilter{Phone: phone})
		if len(rows) != 2 || rows[0].Phone != phone || rows[1].Phone != phone {
			t.Errorf("ListSends by phone: got %+v, want the sent and the blocked send to %s", rows, phone)
		}
		if d, err := e.Store.VerificationDetail(e.Ctx, v.ID); err != nil || d.Verification.Address != phone || len(d.Sends) != 1 || d.Sends[0].Phone != phone {
			t.Errorf("VerificationDetail: got %+v, %v; want %s", d, err, phone)
		}
		for _, f := range []history.AttemptFilter{{Address: mail}, {Prefix: "+81907"}} {
			rows, _, err := e.Store.VerificationAttempts(e.Ctx, f)
			want := map[bool]string{true: mail, false: phone}[f.Address != ""]
			if err != nil || len(rows) != 1 || rows[0].Phone != want {
				t.Errorf("VerificationAttempts(%+v): got %+v, %v; want the send to %s", f, rows, err, want)
			}
		}
		evs := e.Drain(fixture.Base().Add(time.Minute))
		for _, ev := range evs {
			var to struct{ To string }
			if err := json.Unmarshal(ev.Data, &to); err != nil || to.To != phone && to.To != mail {
				t.Errorf("%s: got %s, %v; want it to name the address", ev.Type, ev.Data, err)
			}
		}
		if len(evs) != 3 {
			t.Errorf("got events %v, want two verification.created and a send.blocked", fixture.Types(evs))
		}
	})

	t.Run("AnAuditTargetNamingAnAddressReadsBack", func(t *testing.T) {
		e := fixture.New(t, newStore)
		for _, target := range []string{"phone:+819077770002", "email:bo.pii@example.com", "ip:192.0.2.9"} {
			if err := e.Store.RecordAdminAction(e.Ctx, history.AdminAction{Action: "limit_reset", Target: target}); err != nil {
				t.Fatalf("RecordAdminAction: %v", err)
			}
		}
		got, err := e.Store.AuditLog(e.Ctx, history.AuditFilter{})
		if err != nil || len(got) != 3 || got[0].Target != "ip:192.0.2.9" || got[1].Target != "email:bo.pii@example.com" || got[2].Target != "phone:+819077770002" {
			t.Errorf("AuditLog: got %+v, %v; want the three targets as written", got, err)
		}
	})
}
