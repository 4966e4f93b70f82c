package otp_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// unknownID is a well-formed verification id that no test creates.
const unknownID = "0190ffff-ffff-7fff-8fff-ffffffffffff"

func TestCheckApproves(t *testing.T) {
	tests := []struct {
		name string
		in   func(id string) otp.CheckInput
	}{
		{"ByPhone", func(string) otp.CheckInput { return otp.CheckInput{Phone: "+81 90-1234-5678"} }},
		{"ByID", func(id string) otp.CheckInput { return otp.CheckInput{ID: id} }},
		{"ByUppercaseID", func(id string) otp.CheckInput { return otp.CheckInput{ID: strings.ToUpper(id)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			sent := e.send(t)
			in := tt.in(sent.Verification.ID)
			in.Code, in.ClientIP = codes[0], testIP
			res, err := e.svc.Check(context.Background(), in)
			if err != nil || res.Verification.ID != sent.Verification.ID || res.Verification.Status != otp.StatusApproved {
				t.Fatalf("got %s %s, %v, want %s approved", res.Verification.ID, res.Verification.Status, err, sent.Verification.ID)
			}
			if want := e.clock.Now(); !res.Verification.ClosedAt.Equal(want) {
				t.Errorf("closed at: got %v, want %v", res.Verification.ClosedAt, want)
			}
			if given := e.limiter.Given(); !reflect.DeepEqual(res.Decision, given[len(given)-1]) {
				t.Errorf("decision: got %+v, want the limiter's", res.Decision)
			}
			if _, err := e.svc.Check(context.Background(), in); !errors.Is(err, otp.ErrNotFound) {
				t.Errorf("second check: got %v, want otp.ErrNotFound", err)
			}
		})
	}
}

func TestCheckCountsWrongGuesses(t *testing.T) {
	e := newEnv(t) // 3 attempts
	sent := e.send(t)
	for _, want := range []int{2, 1, 0} {
		_, err := e.check("000000")
		var invalid *otp.ErrInvalidCode
		if !errors.As(err, &invalid) || invalid.AttemptsLeft != want {
			t.Fatalf("wrong guess: got %v, want *otp.ErrInvalidCode with %d attempts left", err, want)
		}
	}
	t.Run("LastWrongGuessKillsIt", func(t *testing.T) {
		if v := e.verification(t, sent.Verification.ID); v.Status != otp.StatusFailed || v.Attempts != 3 {
			t.Errorf("got %s attempts=%d, want failed attempts=3", v.Status, v.Attempts)
		}
	})
	t.Run("RightCodeIsTooManyAttemptsAfterTheLast", func(t *testing.T) {
		if _, err := e.check(codes[0]); !errors.Is(err, otp.ErrTooManyAttempts) {
			t.Errorf("got %v, want otp.ErrTooManyAttempts", err)
		}
	})
	t.Run("NextSendStartsAnew", func(t *testing.T) {
		if res := e.send(t); !res.Created || res.Verification.ID == sent.Verification.ID {
			t.Errorf("got created %v id %s, want a new verification", res.Created, res.Verification.ID)
		}
	})
}

func TestCheckExpiry(t *testing.T) {
	tests := []struct {
		name    string
		after   time.Duration
		wantErr error
	}{
		{"JustBeforeExpiryApproves", 5*time.Minute - time.Microsecond, nil},
		{"AtExpiryIsExpired", 5 * time.Minute, otp.ErrExpired},
		{"AfterExpiryIsExpired", time.Hour, otp.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			sent := e.send(t)
			e.clock.Set(e.clock.Now().Add(tt.after))
			if _, err := e.check(codes[0]); !errors.Is(err, tt.wantErr) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil {
				return
			}
			if v := e.verification(t, sent.Verification.ID); v.Status != otp.StatusExpired || v.Attempts != 0 {
				t.Errorf("got %s attempts=%d, want expired with no attempt counted", v.Status, v.Attempts)
			}
			if _, err := e.check(codes[0]); !errors.Is(err, otp.ErrExpired) {
				t.Errorf("second check: got %v, want otp.ErrExpired", err)
			}
		})
	}
}

func TestCheckAsksTheLimiter(t *testing.T) {
	checkPhone := rate.Limit{Scope: otp.ScopeCheckPhone, Key: testPhone, Rules: []rate.Rule{{Limit: 5, Window: time.Minute}}}
	checkIP := rate.Limit{Scope: otp.ScopeCheckIP, Key: testIP, Rules: []rate.Rule{{Limit: 20, Window: time.Minute}}}
	tests := []struct {
		name       string
		send       bool
		in         func(id string) otp.CheckInput
		wantPolicy []rate.Limit
		wantErr    error
	}{
		{"ByIDPaysForTheVerificationsPhone", true, func(id string) otp.CheckInput { return otp.CheckInput{ID: id} }, []rate.Limit{checkPhone, checkIP}, nil},
		{"ByPhone", true, func(string) otp.CheckInput { return otp.CheckInput{Phone: testPhone} }, []rate.Limit{checkPhone, checkIP}, nil},
		{"UnknownIDStillCostsTheIP", false, func(string) otp.CheckInput { return otp.CheckInput{ID: unknownID} }, []rate.Limit{checkIP}, otp.ErrNotFound},
		// Nothing to check: the phone's check budget is not spent (issue 19), the IP's is.
		{"UnknownPhoneCostsOnlyTheIP", false, func(string) otp.CheckInput { return otp.CheckInput{Phone: testPhone} }, []rate.Limit{checkIP}, otp.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var id string
			if tt.send {
				id = e.send(t).Verification.ID
			}
			before := len(e.limiter.Allows())
			in := tt.in(id)
			in.Code, in.ClientIP = codes[0], testIP
			if _, err := e.svc.Check(context.Background(), in); !errors.Is(err, tt.wantErr) {
				t.Errorf("got %v, want %v", err, tt.wantErr)
			}
			if got := e.limiter.Allows()[before:]; !reflect.DeepEqual(got, [][]rate.Limit{tt.wantPolicy}) {
				t.Errorf("policy: got %+v, want %+v", got, tt.wantPolicy)
			}
			if in.ID == unknownID && e.store.Calls("Check") != 0 {
				t.Errorf("store check: got %d calls, want none for an unknown id", e.store.Calls("Check"))
			}
		})
	}
}

func TestCheckRateLimited(t *testing.T) {
	e := newEnv(t)
	sent := e.send(t)
	deny := []rate.RuleState{violated(otp.ScopeCheckPhone, testPhone, rate.Rule{Limit: 5, Window: time.Minute}, 20*time.Second)}
	e.limiter.Deny = deny
	res, err := e.check(codes[0])
	var limited *otp.ErrRateLimited
	want := rate.Decision{Rules: deny}
	if !errors.As(err, &limited) || !reflect.DeepEqual(limited.Decision, want) {
		t.Fatalf("got %v, want *otp.ErrRateLimited with %+v", err, want)
	}
	if !reflect.DeepEqual(res.Decision, want) {
		t.Errorf("result decision: got %+v, want %+v", res.Decision, want)
	}
	if n := e.store.Calls("Check"); n != 0 {
		t.Errorf("store check: got %d calls, want none", n)
	}
	t.Run("RefusalSpendsNoAttempt", func(t *testing.T) {
		e.limiter.Deny = nil
		if v := e.verification(t, sent.Verification.ID); v.Attempts != 0 || v.Status != otp.StatusPending {
			t.Errorf("got %s attempts=%d, want pending with none", v.Status, v.Attempts)
		}
		if _, err := e.check(codes[0]); err != nil {
			t.Errorf("check once admitted: got %v, want approved", err)
		}
	})
}

func TestCheckBackingServiceUnavailable(t *testing.T) {
	tests := []struct {
		name       string
		fail       func(*env)
		byID       bool
		wantAsked  bool // the limiter
		wantChecks int  // store Check calls
	}{
		{"Limiter", func(e *env) { e.limiter.Err = errUnavailable }, false, true, 0},
		{"StoreLookupByID", func(e *env) { e.store.VerificationErr = errUnavailable }, true, false, 0},
		{"StoreCheck", func(e *env) { e.store.CheckErr = errUnavailable }, false, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			sent := e.send(t)
			tt.fail(e)
			in := otp.CheckInput{Phone: testPhone, Code: codes[0], ClientIP: testIP}
			if tt.byID {
				in.Phone, in.ID = "", sent.Verification.ID
			}
			before := len(e.limiter.Allows())
			// Another instance: the sending one remembers the verification and reads nothing.
			if _, err := e.otherInstance(t).Check(context.Background(), in); !errors.Is(err, otp.ErrUnavailable) {
				t.Fatalf("got %v, want it to wrap otp.ErrUnavailable", err)
			}
			if asked := len(e.limiter.Allows()) > before; asked != tt.wantAsked {
				t.Errorf("limiter asked: got %v, want %v", asked, tt.wantAsked)
			}
			if got := e.store.Calls("Check"); got != tt.wantChecks {
				t.Errorf("store check: got %d calls, want %d", got, tt.wantChecks)
			}
			if v := e.verification(t, sent.Verification.ID); v.Status != otp.StatusPending || v.Attempts != 0 {
				t.Errorf("got %s attempts=%d, want pending with none", v.Status, v.Attempts)
			}
		})
	}
}

func TestCheckRefusesMalformedInputFirst(t *testing.T) {
	tests := []struct {
		name       string
		in         otp.CheckInput
		wantFields map[string]string // nil: want *contact.ErrInvalidPhone
	}{
		{"CodeHasTheConfiguredLength", otp.CheckInput{Phone: testPhone, Code: "123456"}, map[string]string{"code": "must be 8 digits"}},
		{"NeitherPhoneNorID", otp.CheckInput{Code: "12345678"}, map[string]string{"phone": `one of "phone", "email" or "id" is required`}},
		{"BothPhoneAndID", otp.CheckInput{Phone: testPhone, ID: unknownID, Code: "12345678"}, map[string]string{"id": `give one of "phone", "email" or "id", not several`}},
		{"IDNotUUID", otp.CheckInput{ID: "42", Code: "12345678"}, map[string]string{"id": "must be a verification id (UUID)"}},
		{"InvalidPhone", otp.CheckInput{Phone: "+81 1", Code: "12345678"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *otp.Config) { c.CodeLength = 8 })
			tt.in.ClientIP = testIP
			res, err := e.svc.Check(context.Background(), tt.in)
			wantBadInput(t, err, tt.wantFields)
			if !reflect.DeepEqual(res, otp.CheckResult{}) {
				t.Errorf("result: got %+v, want zero", res)
			}
			e.wantUntouched(t)
		})
	}
}

func TestCheckByIDReadsWhatTheInstanceHasNotSeen(t *testing.T) {
	e := newEnv(t)
	sent := e.send(t)
	wrong := otp.CheckInput{ID: sent.Verification.ID, Code: "000000", ClientIP: testIP}
	other := e.otherInstance(t)
	steps := []struct {
		name      string
		svc       *otp.Service
		wantReads int // store Verification calls so far
		wantLeft  int
	}{
		{"OnTheSendingInstance", e.svc, 0, 2},
		{"OnAnotherInstance", other, 1, 1},
		{"AgainOnTheSendingInstanceWithAStaleView", e.svc, 1, 0},
	}
	for _, st := range steps {
		_, err := st.svc.Check(context.Background(), wrong)
		var invalid *otp.ErrInvalidCode
		if !errors.As(err, &invalid) || invalid.AttemptsLeft != st.wantLeft {
			t.Fatalf("%s: got %v, want invalid_code with %d attempts left", st.name, err, st.wantLeft)
		}
		if got := e.store.Calls("Verification"); got != st.wantReads {
			t.Errorf("%s: got %d store reads, want %d", st.name, got, st.wantReads)
		}
	}
	t.Run("AFailedCheckForgets", func(t *testing.T) {
		e := newEnv(t)
		sent := e.send(t)
		e.store.CheckErr = errUnavailable
		in := otp.CheckInput{ID: sent.Verification.ID, Code: codes[0], ClientIP: testIP}
		if _, err := e.svc.Check(context.Background(), in); !errors.Is(err, otp.ErrUnavailable) {
			t.Fatalf("got %v, want unavailable", err)
		}
		e.store.CheckErr = nil
		if _, err := e.svc.Check(context.Background(), in); err != nil {
			t.Fatalf("got %v, want approved", err)
		}
		if got := e.store.Calls("Verification"); got != 1 {
			t.Errorf("got %d store reads, want 1: what a failed check leaves is read again", got)
		}
	})
}

func TestCheckByPhoneDecidesOnTheRememberedPendingVerification(t *testing.T) {
	e := newEnv(t)
	sent := e.send(t)
	in := otp.CheckInput{Phone: testPhone, Code: "000000", ClientIP: testIP}
	seen := func(svc *otp.Service) *otp.Verification {
		t.Helper()
		var invalid *otp.ErrInvalidCode
		if _, err := svc.Check(context.Background(), in); !errors.As(err, &invalid) {
			t.Fatalf("got %v, want invalid_code", err)
		}
		return e.store.LastCheck.Seen
	}
	if s := seen(e.svc); s == nil || s.ID != sent.Verification.ID || s.Status != otp.StatusPending {
		t.Errorf("on the sending instance: got seen %+v, want the pending verification it sent", s)
	}
	other := e.otherInstance(t)
	if s := seen(other); s == nil || s.ID != sent.Verification.ID || s.Status != otp.StatusPending || s.Attempts != 1 {
		t.Errorf("on another instance: got seen %+v, want the pending verification it read before the limiter", s)
	}
	in.Code = codes[0]
	if _, err := other.Check(context.Background(), in); err != nil {
		t.Fatalf("right code: got %v, want approved", err)
	}
	if s := e.store.LastCheck.Seen; s == nil || s.Attempts != 2 {
		t.Errorf("on another instance after its own check: got seen %+v, want what that check saved (2 attempts)", s)
	}
	in.Code = "000000"
	if _, err := other.Check(context.Background(), in); !errors.Is(err, otp.ErrNotFound) {
		t.Fatalf("after approval: got %v, want not found", err)
	}
	if last := e.store.LastCheck; last.ID != sent.Verification.ID || last.Phone != "" || last.Seen == nil || last.Seen.Status != otp.StatusApproved {
		t.Errorf("after approval: got %+v, want the check pinned to the closed verification by id", last)
	}
}
