package operatorstest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// newOperator is an account of the suite, created at base().
func newOperator(email string, role operators.Role) operators.Operator {
	return operators.Operator{
		ID: uuid.Must(uuid.NewV7()).String(), Email: email, Name: "Name of " + email, Role: role,
		CreatedAt: fixture.Base(), UpdatedAt: fixture.Base(),
	}
}

func testOperators(t *testing.T, newStore func(t *testing.T) fixture.Subject) {

	t.Run("CreateFindUpdate", func(t *testing.T) {
		e := fixture.New(t, newStore)
		o := newOperator("alice@example.com", operators.RoleViewer)
		if err := e.Store.CreateOperator(e.Ctx, o, fixture.Action(operators.ActionOperatorCreate)); err != nil {
			t.Fatalf("CreateOperator: %v", err)
		}
		got, err := e.Store.OperatorByEmail(e.Ctx, "alice@example.com")
		if err != nil || got != o {
			t.Fatalf("OperatorByEmail: got %+v, %v; want %+v", got, err, o)
		}
		o.Role, o.Subject, o.Disabled, o.RoleFromConsole, o.UpdatedAt = operators.RoleAdmin, "sub-1", true, true, fixture.Base().Add(time.Minute)
		if err := e.Store.UpdateOperator(e.Ctx, o, false, fixture.Action(operators.ActionOperatorUpdate)); err != nil {
			t.Fatalf("UpdateOperator: %v", err)
		}
		if got, err := e.Store.OperatorBySubject(e.Ctx, "sub-1"); err != nil || got != o {
			t.Errorf("OperatorBySubject: got %+v, %v; want %+v", got, err, o)
		}
		if got, err := e.Store.OperatorByID(e.Ctx, o.ID); err != nil || got != o {
			t.Errorf("OperatorByID: got %+v, %v; want %+v", got, err, o)
		}
		all, err := e.Store.ListOperators(e.Ctx)
		if err != nil || len(all) != 1 || all[0] != o {
			t.Errorf("ListOperators: got %+v, %v; want the one account", all, err)
		}
		actions, err := e.Store.AdminActions(e.Ctx, 0)
		if err != nil || len(actions) != 2 || actions[0].Action != operators.ActionOperatorUpdate {
			t.Errorf("AdminActions: got %+v, %v; want the update and the creation", actions, err)
		}
	})

	t.Run("UnknownIsNotFound", func(t *testing.T) {
		e := fixture.New(t, newStore)
		for name, err := range map[string]error{
			"by id":      fixture.Second(e.Store.OperatorByID(e.Ctx, uuid.NewString())),
			"by bad id":  fixture.Second(e.Store.OperatorByID(e.Ctx, "not-a-uuid")),
			"by email":   fixture.Second(e.Store.OperatorByEmail(e.Ctx, "nobody@example.com")),
			"by subject": fixture.Second(e.Store.OperatorBySubject(e.Ctx, "nobody")),
			"update":     e.Store.UpdateOperator(e.Ctx, newOperator("x@example.com", operators.RoleViewer), false, fixture.Action("x")),
			"token":      e.Store.CreateToken(e.Ctx, operators.Token{ID: "OT1", OperatorID: uuid.NewString(), Hash: make([]byte, 32), CreatedAt: fixture.Base(), ExpiresAt: fixture.Base().Add(time.Hour)}, fixture.Action("x")),
			"by hash":    fixture.Second(e.Store.TokenByHash(e.Ctx, make([]byte, 32))),
		} {
			if !errors.Is(err, otp.ErrNotFound) {
				t.Errorf("%s: got %v, want otp.ErrNotFound", name, err)
			}
		}
		if actions, _ := e.Store.AdminActions(e.Ctx, 0); len(actions) != 0 {
			t.Errorf("got audit entries %+v for changes that failed", actions)
		}
	})

	t.Run("EmailAndSubjectAreUnique", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a, b := newOperator("a@example.com", operators.RoleViewer), newOperator("b@example.com", operators.RoleViewer)
		a.Subject = "sub-a"
		for _, o := range []operators.Operator{a, b} {
			if err := e.Store.CreateOperator(e.Ctx, o, fixture.Action("create")); err != nil {
				t.Fatalf("CreateOperator: %v", err)
			}
		}
		dup := newOperator("a@example.com", operators.RoleAdmin)
		fixture.WantInvalid(t, "CreateOperator with a taken email", e.Store.CreateOperator(e.Ctx, dup, fixture.Action("create")), "email")
		b.Subject = "sub-a"
		fixture.WantInvalid(t, "UpdateOperator to a taken subject", e.Store.UpdateOperator(e.Ctx, b, false, fixture.Action("update")), "subject")
		if got, _ := e.Store.OperatorByID(e.Ctx, b.ID); got.Subject != "" {
			t.Errorf("subject: got %q, want the refused change not kept", got.Subject)
		}
		if actions, _ := e.Store.AdminActions(e.Ctx, 0); len(actions) != 2 {
			t.Errorf("got %d audit entries, want the 2 creations only", len(actions))
		}
	})

	t.Run("Tokens", func(t *testing.T) {
		e := fixture.New(t, newStore)
		o := newOperator("ops@example.com", operators.RoleOperator)
		if err := e.Store.CreateOperator(e.Ctx, o, fixture.Action("create")); err != nil {
			t.Fatalf("CreateOperator: %v", err)
		}
		tok := operators.Token{ID: "OT0001", OperatorID: o.ID, Name: "laptop", Hash: bytes.Repeat([]byte{7}, 32),
			CreatedAt: fixture.Base(), ExpiresAt: fixture.Base().Add(24 * time.Hour)}
		if err := e.Store.CreateToken(e.Ctx, tok, fixture.Action(operators.ActionTokenCreate)); err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		got, err := e.Store.TokenByHash(e.Ctx, tok.Hash)
		if err != nil || got.ID != tok.ID || got.OperatorID != o.ID || !got.ExpiresAt.Equal(tok.ExpiresAt) || got.Revoked() {
			t.Fatalf("TokenByHash: got %+v, %v; want %+v", got, err, tok)
		}
		used := fixture.Base().Add(time.Hour)
		if err := e.Store.TouchOperator(e.Ctx, o.ID, tok.ID, used); err != nil {
			t.Fatalf("TouchOperator: %v", err)
		}
		if err := e.Store.RevokeToken(e.Ctx, o.ID, tok.ID, used, fixture.Action(operators.ActionTokenRevoke)); err != nil {
			t.Fatalf("RevokeToken: %v", err)
		}
		if err := e.Store.RevokeToken(e.Ctx, o.ID, tok.ID, used, fixture.Action(operators.ActionTokenRevoke)); !errors.Is(err, otp.ErrNotFound) {
			t.Errorf("second RevokeToken: got %v, want otp.ErrNotFound", err)
		}
		list, err := e.Store.OperatorTokens(e.Ctx, o.ID)
		if err != nil || len(list) != 1 || !list[0].RevokedAt.Equal(used) || !list[0].LastUsedAt.Equal(used) {
			t.Errorf("OperatorTokens: got %+v, %v; want the token revoked and used at %v", list, err, used)
		}
		if acct, _ := e.Store.OperatorByID(e.Ctx, o.ID); !acct.LastSeenAt.Equal(used) {
			t.Errorf("LastSeenAt: got %v, want %v", acct.LastSeenAt, used)
		}
		actions, _ := e.Store.AdminActions(e.Ctx, 0)
		if len(actions) != 3 || actions[0].Action != operators.ActionTokenRevoke {
			t.Errorf("got audit entries %+v, want creation, token, revocation", actions)
		}
	})

}

// testOperatorSessions holds the cases of testOperators about sessions and sign-ins.
func testOperatorSessions(t *testing.T, newStore func(t *testing.T) fixture.Subject) {

	t.Run("EndSessionsMovesTheEpochOnAndUpdatesKeepIt", func(t *testing.T) {
		e := fixture.New(t, newStore)
		o := newOperator("ops@example.com", operators.RoleOperator)
		if err := e.Store.CreateOperator(e.Ctx, o, fixture.Action("create")); err != nil {
			t.Fatalf("CreateOperator: %v", err)
		}
		for range 2 {
			if err := e.Store.EndSessions(e.Ctx, o.ID); err != nil {
				t.Fatalf("EndSessions: %v", err)
			}
		}
		o.Name = "renamed" // an update made with the account as read before the sign-outs
		if err := e.Store.UpdateOperator(e.Ctx, o, false, fixture.Action("update")); err != nil {
			t.Fatalf("UpdateOperator: %v", err)
		}
		if got, err := e.Store.OperatorByID(e.Ctx, o.ID); err != nil || got.SessionEpoch != 2 || got.Name != "renamed" {
			t.Errorf("account: got %+v, %v; want epoch 2 and the new name", got, err)
		}
		if err := e.Store.EndSessions(e.Ctx, uuid.NewString()); err != nil {
			t.Errorf("EndSessions of an unknown account: got %v, want nil", err)
		}
	})

	t.Run("ASignInIsRecordedApartFromTokenUse", func(t *testing.T) {
		e := fixture.New(t, newStore)
		o := newOperator("ops@example.com", operators.RoleOperator)
		o.Subject = "sub-ops"
		if err := e.Store.CreateOperator(e.Ctx, o, fixture.Action("create")); err != nil {
			t.Fatalf("CreateOperator: %v", err)
		}
		tok := operators.Token{ID: "OT0002", OperatorID: o.ID, Hash: bytes.Repeat([]byte{8}, 32), CreatedAt: fixture.Base(), ExpiresAt: fixture.Base().Add(24 * time.Hour)}
		if err := e.Store.CreateToken(e.Ctx, tok, fixture.Action("token")); err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		signedIn, used := fixture.Base().Add(time.Hour), fixture.Base().Add(2*time.Hour)
		if err := e.Store.TouchOperator(e.Ctx, o.ID, "", signedIn); err != nil {
			t.Fatalf("TouchOperator (sign-in): %v", err)
		}
		if err := e.Store.TouchOperator(e.Ctx, o.ID, tok.ID, used); err != nil {
			t.Fatalf("TouchOperator (token): %v", err)
		}
		o.Name = "renamed"
		if err := e.Store.UpdateOperator(e.Ctx, o, false, fixture.Action("update")); err != nil {
			t.Fatalf("UpdateOperator: %v", err)
		}
		got, err := e.Store.OperatorByID(e.Ctx, o.ID)
		if err != nil || !got.SignedInAt.Equal(signedIn) || !got.LastSeenAt.Equal(used) {
			t.Errorf("account: got %+v, %v; want signed in at %v and last seen at %v", got, err, signedIn, used)
		}
	})

}

// testOperatorAdmins holds the cases of testOperators about the last admin and login states.
func testOperatorAdmins(t *testing.T, newStore func(t *testing.T) fixture.Subject) {

	t.Run("TheLastActiveAdminStays", func(t *testing.T) {
		e := fixture.New(t, newStore)
		a, b := newOperator("a@example.com", operators.RoleAdmin), newOperator("b@example.com", operators.RoleAdmin)
		if err := e.Store.CreateOperator(e.Ctx, a, fixture.Action("create")); err != nil {
			t.Fatalf("CreateOperator: %v", err)
		}
		demoted, disabled := a, a
		demoted.Role, disabled.Disabled = operators.RoleOperator, true
		for name, o := range map[string]operators.Operator{"demoted": demoted, "disabled": disabled} {
			if err := e.Store.UpdateOperator(e.Ctx, o, true, fixture.Action("update")); !errors.Is(err, operators.ErrLastAdmin) {
				t.Errorf("%s: got %v, want operators.ErrLastAdmin", name, err)
			}
		}
		if got, _ := e.Store.OperatorByID(e.Ctx, a.ID); got != a {
			t.Errorf("the last admin: got %+v, want it unchanged", got)
		}
		if err := e.Store.CreateOperator(e.Ctx, b, fixture.Action("create")); err != nil {
			t.Fatalf("CreateOperator: %v", err)
		}
		// Both admins demoted at once: one change waits for the other and is refused.
		errs := make(chan error, 2)
		for _, o := range []operators.Operator{a, b} {
			go func() {
				o.Role = operators.RoleViewer
				errs <- e.Store.UpdateOperator(e.Ctx, o, true, fixture.Action("update"))
			}()
		}
		var refused int
		for range 2 {
			err := <-errs
			switch {
			case errors.Is(err, operators.ErrLastAdmin):
				refused++
			case err != nil:
				t.Errorf("UpdateOperator: %v", err)
			}
		}
		if refused != 1 {
			t.Errorf("of two admins demoted at once: %d refused, want 1", refused)
		}
		if actions, _ := e.Store.AdminActions(e.Ctx, 0); len(actions) != 3 {
			t.Errorf("got %d audit entries, want the 2 creations and the 1 demotion", len(actions))
		}
		// Single sign-on follows the provider even for the last admin.
		left := a
		if got, _ := e.Store.OperatorByID(e.Ctx, a.ID); got.Role != operators.RoleAdmin {
			left = b
		}
		left.Disabled = true
		if err := e.Store.UpdateOperator(e.Ctx, left, false, fixture.Action("update")); err != nil {
			t.Errorf("without keepAnAdmin: got %v, want the change made", err)
		}
	})

	t.Run("ALoginStateIsUsedOnce", func(t *testing.T) {
		e := fixture.New(t, newStore)
		state, other := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
		expires := fixture.Base().Add(10 * time.Minute)
		if err := e.Store.UseLoginState(e.Ctx, state, expires, fixture.Base()); err != nil {
			t.Fatalf("first use: %v", err)
		}
		if err := e.Store.UseLoginState(e.Ctx, state, expires, fixture.Base().Add(time.Minute)); !errors.Is(err, operators.ErrLoginUsed) {
			t.Errorf("second use: got %v, want operators.ErrLoginUsed", err)
		}
		if err := e.Store.UseLoginState(e.Ctx, other, expires, fixture.Base().Add(time.Minute)); err != nil {
			t.Errorf("another state: got %v, want it used", err)
		}
	})
}
