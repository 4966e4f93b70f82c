package inproc

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"

	"otpgate/internal/challenge"
	"otpgate/internal/server/servertest"
)

func TestChallengesEndToEnd(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_FRAUD_FLOOR_PREFIX": "3", "OTP_FRAUD_GUARD": "enforce",
		"OTP_CHALLENGE_COMPLEXITY": "1000", "OTP_FRAUD_VOLUME_FLOOR": "0", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "0",
		// A solution used twice from the same client must meet the challenge's rule, not the duplicate window.
		"OTP_DUPLICATE_WINDOW": "0",
	}))

	t.Run("ABlockedPrefixAdmitsASolvedChallengeOnce", func(t *testing.T) {
		prefix := servertest.NewPrefix()
		for i := range 2 {
			servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(prefix, i), servertest.From(fmt.Sprintf("10.20.%d.1", i))...), http.StatusCreated, "")
		}
		r := servertest.Send(t, in, servertest.PrefixPhone(prefix, 2), servertest.From("10.20.2.1")...)
		servertest.WantStatus(t, r, http.StatusForbidden, "fraud_blocked")
		if r.Str("target") != "prefix" || r.Num("retry_after_seconds") < 1 {
			t.Errorf("got %s, want the prefix named as the target and a retry time", r.Raw)
		}
		ch := servertest.ChallengeOf(t, r)
		// A legitimate user of the blocked prefix solves it and gets the code.
		servertest.WantStatus(t, servertest.SendSolved(t, in, servertest.PrefixPhone(prefix, 2), ch, servertest.From("10.20.2.1")...), http.StatusCreated, "")
		if got := len(p.Received(servertest.PrefixPhone(prefix, 2))); got != 1 {
			t.Errorf("got %d messages, want the code sent once", got)
		}
		// The same solution again, or for another number, is refused and spends nothing: the
		// block now asks the next level, four times the work.
		solution, _ := challenge.Solve(ch)
		again := servertest.Post(t, in.API+"/v1/verifications", map[string]string{"phone": servertest.PrefixPhone(prefix, 2), "altcha": solution}, servertest.From("10.20.2.1")...)
		servertest.WantStatus(t, again, http.StatusForbidden, "fraud_blocked")
		if next := servertest.ChallengeOf(t, again); next.MaxNumber != 4*ch.MaxNumber {
			t.Errorf("after a solved send: got a challenge of maxnumber %d, want %d", next.MaxNumber, 4*ch.MaxNumber)
		}
		if got := len(p.Received(servertest.PrefixPhone(prefix, 2))); got != 1 {
			t.Errorf("the used solution sent %d messages in all, want 1", got)
		}
		other := servertest.Post(t, in.API+"/v1/verifications", map[string]string{"phone": servertest.PrefixPhone(prefix, 5), "altcha": solution}, servertest.From("10.20.2.1")...)
		servertest.WantStatus(t, other, http.StatusUnprocessableEntity, "challenge_invalid")
		if got := len(p.Received(servertest.PrefixPhone(prefix, 5))); got != 0 {
			t.Errorf("a refused solution sent %d messages", got)
		}
	})

	t.Run("ABlockAdmitsAFewSolvedSendsThenNone", func(t *testing.T) {
		prefix := servertest.NewPrefix()
		for i := range 2 {
			servertest.Send(t, in, servertest.PrefixPhone(prefix, i), servertest.From(fmt.Sprintf("10.21.%d.1", i))...)
		}
		admitted, work := 0, 0
		for i := 2; i < 12; i++ {
			ip := servertest.From(fmt.Sprintf("10.21.%d.1", i))
			r := servertest.Send(t, in, servertest.PrefixPhone(prefix, i), ip...)
			servertest.WantStatus(t, r, http.StatusForbidden, "fraud_blocked")
			if _, ok := r.Body["challenge"]; !ok {
				break
			}
			// Each solved send of the block asks four times the work of the one before.
			ch := servertest.ChallengeOf(t, r)
			if work > 0 && ch.MaxNumber != 4*work {
				t.Errorf("solved send %d: got maxnumber %d, want %d", admitted+1, ch.MaxNumber, 4*work)
			}
			work = ch.MaxNumber
			servertest.WantStatus(t, servertest.SendSolved(t, in, servertest.PrefixPhone(prefix, i), ch, ip...), http.StatusCreated, "")
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
		r := servertest.Send(t, in, premium, servertest.From("10.22.0.1")...)
		servertest.WantStatus(t, r, http.StatusUnprocessableEntity, "number_type_not_allowed")
		if got := len(p.Received(premium)); got != 0 {
			t.Errorf("got %d messages to a premium-rate number", got)
		}
	})
}

func TestChallengeSignalsEndToEnd(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_CHALLENGE_COMPLEXITY": "1000", "OTP_FRAUD_GUARD": "enforce",
		"OTP_FRAUD_VOLUME_FLOOR": "4", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "0", "OTP_DENY_NUMBER_TYPES": "none",
	}))

	t.Run("VolumeInANewPrefixAsksForAChallenge", func(t *testing.T) {
		prefix := servertest.NewPrefix()
		for i := range 3 {
			servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(prefix, i), servertest.From(fmt.Sprintf("10.30.%d.1", i))...), http.StatusCreated, "")
		}
		r := servertest.Send(t, in, servertest.PrefixPhone(prefix, 3), servertest.From("10.30.3.1")...)
		servertest.WantStatus(t, r, http.StatusPreconditionRequired, "challenge_required")
		if tg := r.Str("target"); tg != "prefix" && tg != "country" {
			t.Errorf("target: got %q, want the kind of target only", tg)
		}
		if got := len(p.Received(servertest.PrefixPhone(prefix, 3))); got != 0 {
			t.Errorf("a challenged send went out: %d messages", got)
		}
		servertest.WantStatus(t, servertest.SendSolved(t, in, servertest.PrefixPhone(prefix, 3), servertest.ChallengeOf(t, r), servertest.From("10.30.3.1")...), http.StatusCreated, "")
	})

	t.Run("NumberTypesCanBeAllowed", func(t *testing.T) {
		num := phonenumbers.GetExampleNumberForType("GB", phonenumbers.PREMIUM_RATE)
		servertest.WantStatus(t, servertest.Send(t, in, phonenumbers.Format(num, phonenumbers.E164), servertest.From("10.31.0.1")...), http.StatusCreated, "")
	})
}

func TestYoungCountriesPoolEndToEnd(t *testing.T) {
	p := servertest.NewProvider(t)
	// A floor of one: the first send to a country without approved history trips the pool.
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_CHALLENGE_COMPLEXITY": "1000", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "1",
		"OTP_FRAUD_GUARD": "enforce",
	}))
	var numbers []string
	for _, region := range []string{"UZ", "KG"} {
		numbers = append(numbers, phonenumbers.Format(phonenumbers.GetExampleNumberForType(region, phonenumbers.MOBILE), phonenumbers.E164))
	}
	for i, n := range numbers {
		ip := servertest.From(fmt.Sprintf("10.40.%d.1", i))
		r := servertest.Send(t, in, n, ip...)
		servertest.WantStatus(t, r, http.StatusPreconditionRequired, "challenge_required")
		if r.Str("target") != "country" {
			t.Errorf("target: got %q, want country", r.Str("target"))
		}
		servertest.WantStatus(t, servertest.SendSolved(t, in, n, servertest.ChallengeOf(t, r), ip...), http.StatusCreated, "")
	}
	blocks := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/fraud/blocks", "")
	if !strings.Contains(blocks.Raw, `"scope":"young_countries"`) {
		t.Errorf("blocks: got %s, want the pool's, which an operator can lift", blocks.Raw)
	}
}
