package otp_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestSendCreatesThenResends(t *testing.T) {
	e := newEnv(t)
	t0 := e.clock.Now()
	first := e.send(t)
	t1 := t0.Add(time.Minute)
	e.clock.Set(t1)
	second := e.send(t)

	t.Run("FirstSendCreates", func(t *testing.T) {
		v := first.Verification
		if !first.Created || v.Status != otp.StatusPending || v.Address != testPhone || v.Sends != 1 {
			t.Errorf("got created %v %s %s sends=%d, want created pending %s sends=1", first.Created, v.Status, v.Address, v.Sends, testPhone)
		}
		if want := t0.Add(5 * time.Minute); !v.ExpiresAt.Equal(want) {
			t.Errorf("expires at: got %v, want %v", v.ExpiresAt, want)
		}
		if first.SendsLeft != 4 {
			t.Errorf("sends left: got %d, want 4", first.SendsLeft)
		}
		// The phone's 1/1m rule is the last to admit another send.
		if want := t0.Add(time.Minute); !first.NextResendAt.Equal(want) {
			t.Errorf("next resend at: got %v, want %v", first.NextResendAt, want)
		}
		if given := e.limiter.Given(); len(given) != 2 || !reflect.DeepEqual(first.Decision, given[0]) {
			t.Errorf("decision: got %+v, want the limiter's %+v", first.Decision, given)
		}
	})
	t.Run("ResendKeepsTheVerification", func(t *testing.T) {
		v := second.Verification
		if second.Created || v.ID != first.Verification.ID || v.Sends != 2 || second.SendsLeft != 3 {
			t.Errorf("got created %v id %s sends=%d left=%d, want a resend of %s with sends=2 left=3",
				second.Created, v.ID, v.Sends, second.SendsLeft, first.Verification.ID)
		}
		if want := t1.Add(5 * time.Minute); !v.ExpiresAt.Equal(want) {
			t.Errorf("expires at: got %v, want %v (extended by the resend)", v.ExpiresAt, want)
		}
	})
	t.Run("EachSendHasAFreshCode", func(t *testing.T) {
		msgs := e.sender.Messages()
		if len(msgs) != 2 || !strings.Contains(msgs[0].Body, codes[0]) || !strings.Contains(msgs[1].Body, codes[1]) {
			t.Fatalf("got messages %+v, want two with codes %s and %s", msgs, codes[0], codes[1])
		}
	})
	t.Run("SentIsRecordedWithTheProviderID", func(t *testing.T) {
		for _, m := range e.sender.Messages() {
			r := e.sendRow(t, m.ID)
			if r.SendStatus != otp.SendSent || r.ProviderMessageID != "SM-fake" || r.VerificationID != first.Verification.ID || r.Provider != "fake" {
				t.Errorf("got row %+v, want sent by fake as SM-fake for %s", r, first.Verification.ID)
			}
		}
		if got := e.limiter.Refunds(); len(got) != 0 {
			t.Errorf("refunds: got %v, want none", got)
		}
	})
}

func TestSendEveryCodeOfAVerificationApproves(t *testing.T) {
	for i, name := range []string{"FirstCode", "SecondCode"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.send(t)
			e.send(t)
			res, err := e.check(codes[i])
			if err != nil || res.Verification.Status != otp.StatusApproved {
				t.Errorf("got %s, %v, want approved", res.Verification.Status, err)
			}
		})
	}
}

// oneOf writes a list as the domain's messages do: "a", "b" or "c".
func oneOf(list []string) string {
	q := make([]string, len(list))
	for i, v := range list {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func TestSendRefusesBadInputBeforeTheLimiter(t *testing.T) {
	const noBreaks = "must not hold line breaks, control or formatting characters"
	const noScheme = "must not hold a scheme such as tel: or a word followed by a colon"
	const noPhone = "must not hold a phone number"
	allLocales := "must be " + oneOf(contact.KnownLocales())
	tests := []struct {
		name       string
		in         otp.SendInput
		wantFields map[string]string // nil: want *contact.ErrInvalidPhone
	}{
		{"PhoneMissing", otp.SendInput{Locale: "ja"}, map[string]string{"phone": "is required"}},
		{"OtherChannel", otp.SendInput{Phone: testPhone, Channel: "fax"}, map[string]string{"channel": `must be "sms", "whatsapp", "voice" or "email"`}},
		{"OtherLocale", otp.SendInput{Phone: testPhone, Locale: "xx"}, map[string]string{"locale": allLocales}},
		{"EmailForSMS", otp.SendInput{Phone: testPhone, Email: "a@example.com"}, map[string]string{"email": `is only for the email channel; give "phone" for "sms"`}},
		{"EveryFieldWrong", otp.SendInput{Channel: "x", Locale: "x"}, map[string]string{
			"phone": "is required", "channel": `must be "sms", "whatsapp", "voice" or "email"`, "locale": allLocales}},
		{"FriendlyNameTooLong", otp.SendInput{Phone: testPhone, FriendlyName: strings.Repeat("あ", 31)}, map[string]string{"friendly_name": "must be at most 30 characters"}},
		{"FriendlyNameOnTwoLines", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\nCall +15550100"}, map[string]string{"friendly_name": noBreaks}},
		{"FriendlyNameWithNUL", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\x00"}, map[string]string{"friendly_name": noBreaks}},
		{"FriendlyNameWithABidiOverride", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\u202eknaB"}, map[string]string{"friendly_name": noBreaks}},
		{"FriendlyNameWithALineSeparator", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\u2028Bank"}, map[string]string{"friendly_name": noBreaks}},
		{"FriendlyNameWithALink", otp.SendInput{Phone: testPhone, FriendlyName: "See https://acme.evil"}, map[string]string{"friendly_name": "must not be or hold a link"}},
		{"FriendlyNameWithAWebAddress", otp.SendInput{Phone: testPhone, FriendlyName: "WWW.acme-login.example"}, map[string]string{"friendly_name": "must not be or hold a link"}},
		{"FriendlyNameWithAFullWidthWebAddress", otp.SendInput{Phone: testPhone, FriendlyName: "ｗｗｗ．acme-login．example"}, map[string]string{"friendly_name": "must not be or hold a link"}},
		{"FriendlyNameWithAFullWidthScheme", otp.SendInput{Phone: testPhone, FriendlyName: "x：／／acme.evil"}, map[string]string{"friendly_name": "must not be or hold a link"}},
		{"FriendlyNameWithIdeographicStops", otp.SendInput{Phone: testPhone, FriendlyName: "www。acme-login。example"}, map[string]string{"friendly_name": "must not be or hold a link"}},
		{"FriendlyNameNotUTF8", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\xff"}, map[string]string{"friendly_name": "must be valid UTF-8"}},
		{"FriendlyNameWithAScriptScheme", otp.SendInput{Phone: testPhone, FriendlyName: "javascript:alert(1)"}, map[string]string{"friendly_name": noScheme}},
		{"FriendlyNameWithATelScheme", otp.SendInput{Phone: testPhone, FriendlyName: "tel:+14155550100"}, map[string]string{"friendly_name": noScheme}},
		{"FriendlyNameWithAnUpperCaseScheme", otp.SendInput{Phone: testPhone, FriendlyName: "SMS:+1"}, map[string]string{"friendly_name": noScheme}},
		{"FriendlyNameWithAFullWidthSchemeColon", otp.SendInput{Phone: testPhone, FriendlyName: "ｔｅｌ：5550100"}, map[string]string{"friendly_name": noScheme}},
		{"FriendlyNameWithAWordAndAColon", otp.SendInput{Phone: testPhone, FriendlyName: "Your bank: call +1"}, map[string]string{"friendly_name": noScheme}},
		{"FriendlyNameWithAPhoneNumber", otp.SendInput{Phone: testPhone, FriendlyName: "Call +1 415 555 0100"}, map[string]string{"friendly_name": noPhone}},
		{"FriendlyNameWithALocalPhoneNumber", otp.SendInput{Phone: testPhone, FriendlyName: "Ring (415) 555-0100"}, map[string]string{"friendly_name": noPhone}},
		{"FriendlyNameWithFullWidthDigits", otp.SendInput{Phone: testPhone, FriendlyName: "Ring ４１５５５５０１００"}, map[string]string{"friendly_name": noPhone}},
		{"FriendlyNameWithAZeroWidthSpace", otp.SendInput{Phone: testPhone, FriendlyName: "Ac\u200bme"}, map[string]string{"friendly_name": noBreaks}},
		{"FriendlyNameWithAnIsolate", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\u2067knaB\u2069"}, map[string]string{"friendly_name": noBreaks}},
		{"FriendlyNameWithAnArabicLetterMark", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\u061c"}, map[string]string{"friendly_name": noBreaks}},
		{"FriendlyNameWithAHangulFiller", otp.SendInput{Phone: testPhone, FriendlyName: "Acme\u3164Bank"}, map[string]string{"friendly_name": "must not hold invisible characters"}},
		{"PhoneWithLetters", otp.SendInput{Phone: "+81 90 1234 ABCD"}, nil},
		{"PhoneWithoutCountry", otp.SendInput{Phone: "090 1234 5678"}, nil},
		{"NotAValidNumber", otp.SendInput{Phone: "+81 1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			res, err := e.svc.Send(context.Background(), tt.in)
			wantBadInput(t, err, tt.wantFields)
			if !reflect.DeepEqual(res, otp.SendResult{}) {
				t.Errorf("result: got %+v, want zero", res)
			}
			e.wantUntouched(t)
		})
	}
}

func TestSendCountryAllowed(t *testing.T) {
	const usPhone = "+14155552671"
	tests := []struct {
		name    string
		allowed []string
		phone   string
		want    string // refused country, "" for sent
	}{
		{"UnlistedCountryIsRefused", []string{"US", "GB"}, testPhone, "JP"},
		{"ListedCountryIsSent", []string{"US", "GB"}, usPhone, ""},
		{"EmptyListAllowsEveryCountry", nil, testPhone, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *otp.Config) { c.AllowedCountries = tt.allowed })
			_, err := e.svc.Send(context.Background(), otp.SendInput{Phone: tt.phone, ClientIP: testIP})
			if tt.want == "" {
				if err != nil || len(e.sender.Messages()) != 1 {
					t.Errorf("got %v and %d messages, want sent", err, len(e.sender.Messages()))
				}
				return
			}
			var refused *otp.ErrCountryNotAllowed
			if !errors.As(err, &refused) || refused.Country != tt.want {
				t.Fatalf("got %v, want *otp.ErrCountryNotAllowed for %s", err, tt.want)
			}
			e.wantUntouched(t)
		})
	}
}

func TestSendAsksTheLimiterOnePolicy(t *testing.T) {
	e := newEnv(t, func(c *otp.Config) { c.GlobalRules = []rate.Rule{{Limit: 1000, Window: time.Hour}} })
	ctx := context.Background()
	// Every spelling of one number, from two clients of one address and one of another.
	sends := []otp.SendInput{
		{Phone: "+81 90-1234-5678", ClientIP: testIP, Fingerprint: "app/1.0"},
		{Phone: "＋８１ ９０ １２３４ ５６７８", ClientIP: testIP, Fingerprint: "app/1.0"},
		{Phone: testPhone, ClientIP: testIP, Fingerprint: "app/2.0"},
		{Phone: testPhone, ClientIP: otherIP, Fingerprint: "app/1.0"},
	}
	for _, in := range sends {
		if _, err := e.svc.Send(ctx, in); err != nil {
			t.Fatalf("send %+v: %v", in, err)
		}
	}
	allows := e.limiter.Allows()
	if len(allows) != len(sends) {
		t.Fatalf("got %d limiter calls, want %d", len(allows), len(sends))
	}

	t.Run("DuplicateFirstThenPhoneIPAndGlobal", func(t *testing.T) {
		var got []string
		for _, l := range allows[0] {
			got = append(got, l.Scope+" "+l.Key)
		}
		want := []string{otp.ScopeDuplicate + " " + allows[0][0].Key, "phone " + testPhone, "ip " + testIP, "global all"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		if got, want := allows[0][0].Rules, []rate.Rule{{Limit: 1, Window: 5 * time.Second}}; !reflect.DeepEqual(got, want) {
			t.Errorf("duplicate rules: got %v, want %v", got, want)
		}
	})
	t.Run("DuplicateKeyTellsClientsApart", func(t *testing.T) {
		keys := make([]string, len(allows))
		for i, a := range allows {
			keys[i] = a[0].Key
		}
		if keys[0] != keys[1] || keys[0] == keys[2] || keys[0] == keys[3] || keys[2] == keys[3] {
			t.Errorf("got duplicate keys %q, want one for the same client and another for each other client", keys)
		}
		if strings.Contains(keys[0], testPhone[1:]) || strings.Contains(keys[0], "app/") {
			t.Errorf("got key %q, want a hash that spells out neither the phone nor the user agent", keys[0])
		}
	})
	t.Run("OffRulesAreLeftOut", func(t *testing.T) {
		e := newEnv(t, func(c *otp.Config) { c.DuplicateWindow, c.PhoneRules = 0, nil })
		e.send(t)
		if got := e.limiter.Allows(); len(got) != 1 || len(got[0]) != 1 || got[0][0].Scope != otp.ScopeIP {
			t.Errorf("got policy %+v, want the ip limit alone", got)
		}
	})
}

func TestSendLimiterRefuses(t *testing.T) {
	dup := violated(otp.ScopeDuplicate, testPhone+"|k", rate.Rule{Limit: 1, Window: 5 * time.Second}, 4*time.Second)
	phone := violated(otp.ScopePhone, testPhone, rate.Rule{Limit: 1, Window: time.Minute}, 50*time.Second)
	ip := violated(otp.ScopeIP, testIP, rate.Rule{Limit: 10, Window: time.Hour}, 30*time.Minute)
	ok := func(s rate.RuleState) rate.RuleState { s.Violated, s.RetryAfter, s.Used = false, 0, 0; return s }
	tests := []struct {
		name          string
		deny          []rate.RuleState
		wantDuplicate bool
		wantReason    string
	}{
		{"PhoneRuleRateLimits", []rate.RuleState{ok(dup), phone, ok(ip)}, false, "phone 1/1m"},
		{"IPRuleRateLimits", []rate.RuleState{ok(dup), ok(phone), ip}, false, "ip 10/1h"},
		{"DoubleSubmitIsDuplicateThoughThePhoneRuleRefusesToo", []rate.RuleState{dup, phone, ok(ip)}, true, "duplicate 1/5s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.limiter.Deny = tt.deny
			res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: "+81 90-1234-5678", ClientIP: testIP})
			want := rate.Decision{Rules: tt.deny}
			var limited *otp.ErrRateLimited
			switch {
			case tt.wantDuplicate && !errors.Is(err, otp.ErrDuplicateSubmit):
				t.Errorf("got %v, want otp.ErrDuplicateSubmit", err)
			case !tt.wantDuplicate && !errors.As(err, &limited):
				t.Errorf("got %v, want *otp.ErrRateLimited", err)
			case !tt.wantDuplicate && !reflect.DeepEqual(limited.Decision, want):
				t.Errorf("refusal decision: got %+v, want %+v", limited.Decision, want)
			}
			if !reflect.DeepEqual(res.Decision, want) {
				t.Errorf("result decision: got %+v, want %+v", res.Decision, want)
			}
			status := otp.SendBlocked
			if tt.wantDuplicate {
				status = otp.SendDuplicate
			}
			got := e.denied.Got()
			if len(got) != 1 || got[0].Status != status || got[0].Reason != tt.wantReason || got[0].Phone != testPhone ||
				got[0].ClientIP != testIP || !got[0].Time.Equal(e.clock.Now()) || got[0].ID == "" {
				t.Errorf("denied records: got %+v, want one %s %q for %s from %s at %v", got, status, tt.wantReason, testPhone, testIP, e.clock.Now())
			}
			if n := e.store.Calls("BeginSend"); n != 0 || len(e.sender.Messages()) != 0 || len(e.limiter.Refunds()) != 0 {
				t.Errorf("got %d begun, %d sent, %d refunds, want nothing", n, len(e.sender.Messages()), len(e.limiter.Refunds()))
			}
		})
	}
}

func TestSendLimiterUnavailable(t *testing.T) {
	e := newEnv(t)
	e.limiter.Err = errUnavailable
	res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, ClientIP: testIP})
	if !errors.Is(err, otp.ErrUnavailable) {
		t.Fatalf("got %v, want it to wrap otp.ErrUnavailable", err)
	}
	if !reflect.DeepEqual(res, otp.SendResult{}) {
		t.Errorf("result: got %+v, want zero", res)
	}
	if n := e.store.Calls("BeginSend"); n != 0 || len(e.sender.Messages()) != 0 || len(e.denied.Got()) != 0 || len(e.limiter.Refunds()) != 0 {
		t.Errorf("got %d begun, %d sent, %d denied, %d refunds, want nothing", n, len(e.sender.Messages()), len(e.denied.Got()), len(e.limiter.Refunds()))
	}
}

func TestSendMessage(t *testing.T) {
	tests := []struct {
		name, locale, wantLocale, want string
	}{
		{"TheCountrysLanguageByDefault", "", "ja", "認証コード: " + codes[0] + "\n5分以内に入力してください。"},
		{"English", "en", "en", "Your verification code is " + codes[0] + ". It expires in 5 minutes."},
		{"Japanese", "ja", "ja", "認証コード: " + codes[0] + "\n5分以内に入力してください。"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *otp.Config) { c.DefaultRegion = "JP" })
			res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: "090-1234-5678", Locale: tt.locale, ClientIP: testIP})
			if err != nil {
				t.Fatal(err)
			}
			msgs := e.sender.Messages()
			if len(msgs) != 1 {
				t.Fatalf("got %d messages, want 1", len(msgs))
			}
			m := msgs[0]
			if !strings.HasPrefix(m.Body, tt.want) || m.Locale != tt.wantLocale || m.To != testPhone || !m.CreatedAt.Equal(e.clock.Now()) {
				t.Errorf("got %+v, want a %s message to %s at %v starting %q", m, tt.wantLocale, testPhone, e.clock.Now(), tt.want)
			}
			if r := e.sendRow(t, m.ID); r.VerificationID != res.Verification.ID || r.Phone != testPhone {
				t.Errorf("message id %s names row %+v, want the send of %s", m.ID, r, res.Verification.ID)
			}
			if v := res.Verification; v.Locale != tt.wantLocale || v.Channel != "sms" {
				t.Errorf("verification: got locale %q channel %q, want %q sms", v.Locale, v.Channel, tt.wantLocale)
			}
		})
	}
}

func TestSendReportsItsOwnChannel(t *testing.T) {
	e := newEnv(t)
	first := e.send(t)
	e.clock.Set(e.clock.Now().Add(time.Minute))
	res, err := e.svc.Send(context.Background(), otp.SendInput{Phone: testPhone, Channel: otp.ChannelVoice, ClientIP: testIP})
	if err != nil {
		t.Fatal(err)
	}
	if first.Channel != otp.ChannelSMS || res.Created || res.Channel != otp.ChannelVoice || res.Verification.Channel != otp.ChannelSMS {
		t.Errorf("got %s then %s (verification %s), want sms then voice on the verification of the first send, sms",
			first.Channel, res.Channel, res.Verification.Channel)
	}
}
