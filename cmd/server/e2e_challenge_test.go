package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"

	"otpgate/internal/challenge"
	"otpgate/internal/proof"
)

// challengeOf reads the challenge a refusal carries.
func challengeOf(t *testing.T, r reply) proof.Challenge {
	t.Helper()
	c, ok := r.Body["challenge"].(map[string]any)
	if !ok {
		t.Fatalf("got %d %s without a challenge: %s", r.Status, r.str("code"), r.Raw)
	}
	s := func(k string) string { v, _ := c[k].(string); return v }
	n, _ := c["maxnumber"].(float64)
	return proof.Challenge{Algorithm: s("algorithm"), Challenge: s("challenge"), MaxNumber: int(n), Salt: s("salt"), Signature: s("signature")}
}

// sendSolved sends again with the solution of ch.
func sendSolved(t *testing.T, in *instance, phone string, ch proof.Challenge, headers ...string) reply {
	t.Helper()
	solution, ok := challenge.Solve(ch)
	if !ok {
		t.Fatalf("cannot solve %+v", ch)
	}
	return post(t, in.api+"/v1/verifications", map[string]string{"phone": phone, "altcha": solution}, headers...)
}

func TestChallengesEndToEnd(t *testing.T) {
	p := newProvider(t)
	in := startServer(t, prodEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_FRAUD_FLOOR_PREFIX": "3", "OTP_FRAUD_GUARD": "enforce",
		"OTP_CHALLENGE_COMPLEXITY": "1000", "OTP_FRAUD_VOLUME_FLOOR": "0", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "0",
		// A solution used twice from the same client must meet the challenge's rule, not the duplicate window.
		"OTP_DUPLICATE_WINDOW": "0",
	}))

	t.Run("ABlockedPrefixAdmitsASolvedChallengeOnce", func(t *testing.T) {
		prefix := newPrefix()
		for i := range 2 {
			wantStatus(t, send(t, in, prefixPhone(prefix, i), from(fmt.Sprintf("10.20.%d.1", i))...), http.StatusCreated, "")
		}
		r := send(t, in, prefixPhone(prefix, 2), from("10.20.2.1")...)
		wantStatus(t, r, http.StatusForbidden, "fraud_blocked")
		if r.str("target") != "prefix" || r.num("retry_after_seconds") < 1 {
			t.Errorf("got %s, want the prefix named as the target and a retry time", r.Raw)
		}
		ch := challengeOf(t, r)
		// A legitimate user of the blocked prefix solves it and gets the code.
		wantStatus(t, sendSolved(t, in, prefixPhone(prefix, 2), ch, from("10.20.2.1")...), http.StatusCreated, "")
		if got := len(p.Received(prefixPhone(prefix, 2))); got != 1 {
			t.Errorf("got %d messages, want the code sent once", got)
		}
		// The same solution again, or for another number, is refused and spends nothing: the
		// block now asks the next level, four times the work.
		solution, _ := challenge.Solve(ch)
		again := post(t, in.api+"/v1/verifications", map[string]string{"phone": prefixPhone(prefix, 2), "altcha": solution}, from("10.20.2.1")...)
		wantStatus(t, again, http.StatusForbidden, "fraud_blocked")
		if next := challengeOf(t, again); next.MaxNumber != 4*ch.MaxNumber {
			t.Errorf("after a solved send: got a challenge of maxnumber %d, want %d", next.MaxNumber, 4*ch.MaxNumber)
		}
		if got := len(p.Received(prefixPhone(prefix, 2))); got != 1 {
			t.Errorf("the used solution sent %d messages in all, want 1", got)
		}
		other := post(t, in.api+"/v1/verifications", map[string]string{"phone": prefixPhone(prefix, 5), "altcha": solution}, from("10.20.2.1")...)
		wantStatus(t, other, http.StatusUnprocessableEntity, "challenge_invalid")
		if got := len(p.Received(prefixPhone(prefix, 5))); got != 0 {
			t.Errorf("a refused solution sent %d messages", got)
		}
	})

	t.Run("ABlockAdmitsAFewSolvedSendsThenNone", func(t *testing.T) {
		prefix := newPrefix()
		for i := range 2 {
			send(t, in, prefixPhone(prefix, i), from(fmt.Sprintf("10.21.%d.1", i))...)
		}
		admitted, work := 0, 0
		for i := 2; i < 12; i++ {
			ip := from(fmt.Sprintf("10.21.%d.1", i))
			r := send(t, in, prefixPhone(prefix, i), ip...)
			wantStatus(t, r, http.StatusForbidden, "fraud_blocked")
			if _, ok := r.Body["challenge"]; !ok {
				break
			}
			// Each solved send of the block asks four times the work of the one before.
			ch := challengeOf(t, r)
			if work > 0 && ch.MaxNumber != 4*work {
				t.Errorf("solved send %d: got maxnumber %d, want %d", admitted+1, ch.MaxNumber, 4*work)
			}
			work = ch.MaxNumber
			wantStatus(t, sendSolved(t, in, prefixPhone(prefix, i), ch, ip...), http.StatusCreated, "")
			admitted++
		}
		// OTP_FRAUD_BLOCK_PASS (3) solved sends per block, whatever time passes.
		if admitted != 3 {
			t.Errorf("got %d sends admitted through the block, want 3 before it offers no challenge", admitted)
		}
	})

	t.Run("PremiumRateNumbersAreRefused", func(t *testing.T) {
		num := phonenumbers.GetExampleNumberForType("GB", phonenumbers.PREMIUM_RATE)
		premium := phonenumbers.Format(num, phonenumbers.E164)
		r := send(t, in, premium, from("10.22.0.1")...)
		wantStatus(t, r, http.StatusUnprocessableEntity, "number_type_not_allowed")
		if got := len(p.Received(premium)); got != 0 {
			t.Errorf("got %d messages to a premium-rate number", got)
		}
	})
}

func TestChallengeSignalsEndToEnd(t *testing.T) {
	p := newProvider(t)
	in := startServer(t, prodEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_CHALLENGE_COMPLEXITY": "1000", "OTP_FRAUD_GUARD": "enforce",
		"OTP_FRAUD_VOLUME_FLOOR": "4", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "0", "OTP_DENY_NUMBER_TYPES": "none",
	}))

	t.Run("VolumeInANewPrefixAsksForAChallenge", func(t *testing.T) {
		prefix := newPrefix()
		for i := range 3 {
			wantStatus(t, send(t, in, prefixPhone(prefix, i), from(fmt.Sprintf("10.30.%d.1", i))...), http.StatusCreated, "")
		}
		r := send(t, in, prefixPhone(prefix, 3), from("10.30.3.1")...)
		wantStatus(t, r, http.StatusPreconditionRequired, "challenge_required")
		if tg := r.str("target"); tg != "prefix" && tg != "country" {
			t.Errorf("target: got %q, want the kind of target only", tg)
		}
		if got := len(p.Received(prefixPhone(prefix, 3))); got != 0 {
			t.Errorf("a challenged send went out: %d messages", got)
		}
		wantStatus(t, sendSolved(t, in, prefixPhone(prefix, 3), challengeOf(t, r), from("10.30.3.1")...), http.StatusCreated, "")
	})

	t.Run("NumberTypesCanBeAllowed", func(t *testing.T) {
		num := phonenumbers.GetExampleNumberForType("GB", phonenumbers.PREMIUM_RATE)
		wantStatus(t, send(t, in, phonenumbers.Format(num, phonenumbers.E164), from("10.31.0.1")...), http.StatusCreated, "")
	})
}

func TestYoungCountriesPoolEndToEnd(t *testing.T) {
	p := newProvider(t)
	// A floor of one: the first send to a country without approved history trips the pool.
	in := startServer(t, prodEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_CHALLENGE_COMPLEXITY": "1000", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "1",
		"OTP_FRAUD_GUARD": "enforce",
	}))
	var numbers []string
	for _, region := range []string{"UZ", "KG"} {
		numbers = append(numbers, phonenumbers.Format(phonenumbers.GetExampleNumberForType(region, phonenumbers.MOBILE), phonenumbers.E164))
	}
	for i, n := range numbers {
		ip := from(fmt.Sprintf("10.40.%d.1", i))
		r := send(t, in, n, ip...)
		wantStatus(t, r, http.StatusPreconditionRequired, "challenge_required")
		if r.str("target") != "country" {
			t.Errorf("target: got %q, want country", r.str("target"))
		}
		wantStatus(t, sendSolved(t, in, n, challengeOf(t, r), ip...), http.StatusCreated, "")
	}
	blocks := adminCall(t, in, http.MethodGet, "/admin/api/fraud/blocks", "")
	if !strings.Contains(blocks.Raw, `"scope":"young_countries"`) {
		t.Errorf("blocks: got %s, want the pool's, which an operator can lift", blocks.Raw)
	}
}
