package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// readingTime is how long after its send an approval comes: past the guard's default
// OTP_FRAUD_MIN_APPROVAL_DELAY (800ms), below which it would count for a quarter, as a
// fraud farm's instant entry does.
const readingTime = time.Second

// flood is the index in shape.other of the denied flood's number, past the check pool.
const flood = 100_000

// sentCode is an allowed send waiting for its approval.
type sentCode struct {
	id, phone, ip string
	at            time.Time
}

// approvals is the queue of one system's allowed sends not yet approved, oldest first.
type approvals struct {
	mu      sync.Mutex
	pending []sentCode
}

// add queues an allowed send whose answer body carries its verification id.
func (a *approvals) add(tg target, at time.Time, body []byte) {
	var v struct{ ID string }
	if json.Unmarshal(body, &v) != nil || v.ID == "" {
		return
	}
	a.mu.Lock()
	a.pending = append(a.pending, sentCode{v.ID, tg.phone, tg.ip, at})
	a.mu.Unlock()
}

// next takes the oldest send made at least readingTime before now; ok is false when none is
// that old. Sends older than a minute are dropped: the queue keeps the recent ones.
func (a *approvals) next(now time.Time) (sentCode, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.pending) > 0 && now.Sub(a.pending[0].at) > time.Minute {
		a.pending = a.pending[1:]
	}
	if len(a.pending) == 0 || now.Sub(a.pending[0].at) < readingTime {
		return sentCode{}, false
	}
	s := a.pending[0]
	a.pending = a.pending[1:]
	return s, true
}

// prepareAllowed establishes the five countries, then returns the allowed mix: of every
// five requests two approve the oldest send of the last minute that is at least readingTime
// old (with its code, from the client that asked), when there is one, and the others send.
// With -targets the codes are unknown, so nothing is approved.
func prepareAllowed(ctx context.Context, e *Env, s *System, o Options, hc *http.Client) (func(int64) request, error) {
	var seq atomic.Int64 // the allowed sends' targets, taken in turn
	q := &approvals{}
	if e.Provider != nil {
		if err := establish(ctx, e, s, o, hc, &seq); err != nil {
			return nil, err
		}
	}
	send := func() request {
		tg := s.shape.allowed(seq.Add(1) - 1)
		r := sendRequest(tg.phone, tg.ip)
		t0 := time.Now()
		r.answer = func(status int, body []byte) {
			if status == http.StatusCreated {
				q.add(tg, t0, body)
			}
		}
		return r
	}
	return func(n int64) request {
		if n%5 >= 2 || e.Provider == nil {
			return send()
		}
		sc, ok := q.next(time.Now())
		if !ok {
			return send()
		}
		return checkRequest(sc.id, e.Provider.LastCode(sc.phone), sc.ip)
	}, nil
}

// establish makes each country of the shape established for the guard, in waves that each
// send to every country and then approve every send of the wave: countries begin young
// (fewer approvals than OTP_FRAUD_YOUNG_APPROVALS, 5), so their first wave stays small,
// and each wave stays small enough for the country's conversion to keep above the guard's
// ratio of its baseline. The last wave leaves each country hundreds of approvals, enough
// for the first second of the scenario, whose sends are not approved yet.
func establish(ctx context.Context, e *Env, s *System, o Options, hc *http.Client, seq *atomic.Int64) error {
	// After a wave, a country holds s sends, all approved; the next may add up to 4.5 s
	// before its conversion falls below 0.3 of the prior's 0.6.
	for wave, perCountry := range []int{8, 15, 60, 250} {
		// Consecutive groups cycle through the countries; a wave takes whole groups.
		n := int64(perCountry * len(loadCountries))
		first := seq.Add(n) - n
		sent := make([]sentCode, n)
		// A loaded machine may time a send out (503): it is tried again, and after three
		// failures left unapproved, up to a fifth of a wave.
		var failed atomic.Value
		var lost atomic.Int64
		fanOut(n, o.Concurrency, func(w int, i int64) {
			tg := s.shape.allowed(first + i)
			var body []byte
			var err error
			for try := range 3 { // a send that failed (503) sent nothing; one refused after it was counted
				if try > 0 {
					time.Sleep(200 * time.Millisecond)
				}
				if body, err = post(ctx, hc, s.Targets[(int(i)+w)%len(s.Targets)], sendRequest(tg.phone, tg.ip)); err == nil {
					break
				}
			}
			if err != nil {
				if lost.Add(1)*5 > n {
					failed.Store(err)
				}
				return
			}
			var v struct{ ID string }
			if err := json.Unmarshal(body, &v); err != nil || v.ID == "" {
				failed.Store(fmt.Errorf("send: got %s", body))
				return
			}
			sent[i] = sentCode{v.ID, tg.phone, tg.ip, time.Now()}
		})
		if err, _ := failed.Load().(error); err != nil {
			return fmt.Errorf("establishing the countries, wave %d: %w", wave+1, err)
		}
		select {
		case <-time.After(readingTime):
		case <-ctx.Done():
			return ctx.Err()
		}
		fanOut(n, o.Concurrency, func(w int, i int64) {
			sc := sent[i]
			if sc.id == "" {
				return
			}
			status, err := do(ctx, hc, s.Targets[(int(i)+w)%len(s.Targets)], checkRequest(sc.id, e.Provider.LastCode(sc.phone), sc.ip))
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("approving %s: got %d, want 200", sc.id, status)
			}
			if err != nil && lost.Add(1)*5 > n {
				failed.Store(err)
			}
		})
		if err, _ := failed.Load().(error); err != nil {
			return fmt.Errorf("establishing the countries, wave %d: %w", wave+1, err)
		}
	}
	return nil
}

// checkRequest checks a code for a verification, from client ip.
func checkRequest(id, code, ip string) request {
	body, _ := json.Marshal(map[string]string{"id": id, "code": code})
	return request{path: "/v1/verifications/check", body: body, ip: ip}
}

// fanOut calls do for each i in [0, n) from at most workers goroutines, w numbering the
// goroutine, and returns when every call has.
func fanOut(n int64, workers int, do func(w int, i int64)) {
	var wg sync.WaitGroup
	work := make(chan int64)
	for w := range min(workers, int(n)) {
		wg.Go(func() {
			for i := range work {
				do(w, i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}
