package pumping

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"otpgate/internal/challenge"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
)

// The attacks on money: a solver that pays for every proof of work it is given, and a
// botnet on countries without history under a global budget, which the budget's fence by
// country must keep to a small part of the cap while the established countries' users
// keep sending.

// solveAll solves the challenge an answer carries and sends again, as long as one comes
// (a block's next level, the young countries' pool), at most a few times. The solver runs
// one solve at a time per prefix, as an attacker who pays for its CPU would: solves of
// one level racing for one target admit one send, and the rest are work thrown away.
func (s *sim) solveAll(ctx context.Context, phone, ip string, status int, p answer) (int, answer, error) {
	if p.Challenge == nil {
		return status, p, nil
	}
	mu, _ := s.solving.LoadOrStore(phone[:len(phone)-prefixDrop], &sync.Mutex{})
	if !mu.(*sync.Mutex).TryLock() {
		return status, p, nil // another send of the prefix is being solved: give this one up
	}
	defer mu.(*sync.Mutex).Unlock()
	for range 4 {
		if p.Challenge == nil {
			break
		}
		solution, ok := challenge.Solve(*p.Challenge)
		if !ok {
			return 0, answer{}, fmt.Errorf("a challenge of %s could not be solved", phone)
		}
		s.attackSolved.Add(1)
		var err error
		status, p, err = s.post(ctx, "/v1/verifications", map[string]string{"phone": phone, "altcha": solution}, ip)
		if err != nil {
			return 0, answer{}, err
		}
	}
	return status, p, nil
}

// capHeadroom is how many times what the legitimate traffic is expected to spend over the
// run the capped case's daily budget holds: the legitimate users alone never reach it.
const capHeadroom = 4

// setCap stores a global daily budget of capHeadroom times what the legitimate traffic
// spends over span at the shipped prices, every other setting the default (the fence on),
// and returns it in micro-units.
func (s *sim) setCap(ctx context.Context, span time.Duration) (int64, error) {
	var perSend float64
	for _, c := range countries() {
		perSend += c.weight * float64(s.prices.Cost(otp.ChannelSMS, c.region, s.numbers.random(c.region), "", 1))
	}
	units := math.Ceil(capHeadroom * perSend * s.plan.legitRate * span.Seconds() / 1e6)
	doc, err := json.Marshal(map[string]any{"currency": spend.DefaultCurrency, "prices": spend.DefaultConfig().Prices,
		"budgets": []map[string]string{{"name": "cap", "daily": fmt.Sprintf("%.0f", units), "mode": rate.BudgetEnforce}}})
	if err != nil {
		return 0, err
	}
	sys := s.e.Systems[0]
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, sys.Procs[0].Admin+"/admin/api/spend/config", bytes.NewReader(doc))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+sys.AdminToken)
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("PUT spend config: %d %s", resp.StatusCode, body)
	}
	// Every instance applies a change within two seconds; this one at once, the next poll
	// at the latest.
	if !sleepUntil(ctx, time.Now().Add(1100*time.Millisecond)) {
		return 0, ctx.Err()
	}
	return int64(units * 1e6), nil
}

// capCell renders what the capped case's attack spent of the cap.
func (r pumpResult) capCell() string {
	if r.capMicros == 0 {
		return ""
	}
	return fmt.Sprintf(" of a cap of %s (%.1f %%)", spend.FormatAmount(r.capMicros), 100*float64(r.attackCost)/float64(r.capMicros))
}
