package conformance

import (
	"sync"
	"testing"

	verify "github.com/twilio/twilio-go/rest/verify/v2"

	"otpgate/internal/server/servertest"
)

// twilioGoRateLimitFlows drives Rate Limits and Buckets through twilio-go: create, fetch,
// list, update and delete both, then RateLimits on creates under concurrency: a bucket of
// Max=3 admits exactly 3 of many concurrent sends naming one value, and another value has
// its own 3.
func twilioGoRateLimitFlows(t *testing.T, s *twilioSetup) {
	acct := twilioGoAccount(t, s, twilioAccountToken)
	created, err := acct.CreateService((&verify.CreateServiceParams{}).SetFriendlyName("Go rate limits"))
	if err != nil {
		t.Fatalf("create service: %v", err)
	}
	svc := servertest.Str(created.Sid)
	t.Cleanup(func() { _ = acct.DeleteService(svc) })

	rl, err := acct.CreateRateLimit(svc, (&verify.CreateRateLimitParams{}).SetUniqueName("end_user_id").SetDescription("per user"))
	if err != nil || len(servertest.Str(rl.Sid)) != 34 || servertest.Str(rl.UniqueName) != "end_user_id" || servertest.Str(rl.Description) != "per user" || servertest.Str(rl.ServiceSid) != svc {
		t.Fatalf("create rate limit: got %+v, %v", rl, err)
	}
	rk := servertest.Str(rl.Sid)
	_, err = acct.CreateRateLimit(svc, (&verify.CreateRateLimitParams{}).SetUniqueName("end_user_id"))
	servertest.WantTwilioError(t, "a second rate limit of one name", err, 60200, 400)
	_, err = acct.CreateRateLimit(svc, (&verify.CreateRateLimitParams{}).SetUniqueName("has space"))
	servertest.WantTwilioError(t, "a unique name with a space", err, 60200, 400)
	if u, err := acct.UpdateRateLimit(svc, rk, (&verify.UpdateRateLimitParams{}).SetDescription("per end user")); err != nil || servertest.Str(u.Description) != "per end user" {
		t.Errorf("update rate limit: got %+v, %v", u, err)
	}
	if f, err := acct.FetchRateLimit(svc, rk); err != nil || servertest.Str(f.Sid) != rk {
		t.Errorf("fetch rate limit: got %+v, %v", f, err)
	}
	if all, err := acct.ListRateLimit(svc, nil); err != nil || len(all) != 1 {
		t.Errorf("list rate limits: got %+v, %v; want one", all, err)
	}

	b, err := acct.CreateBucket(svc, rk, (&verify.CreateBucketParams{}).SetMax(5).SetInterval(600))
	if err != nil || b.Max != 5 || b.Interval != 600 || servertest.Str(b.RateLimitSid) != rk {
		t.Fatalf("create bucket: got %+v, %v", b, err)
	}
	if u, err := acct.UpdateBucket(svc, rk, servertest.Str(b.Sid), (&verify.UpdateBucketParams{}).SetMax(3)); err != nil || u.Max != 3 || u.Interval != 600 {
		t.Errorf("update bucket: got %+v, %v; want max 3 over 600 s", u, err)
	}
	if f, err := acct.FetchBucket(svc, rk, servertest.Str(b.Sid)); err != nil || f.Max != 3 {
		t.Errorf("fetch bucket: got %+v, %v", f, err)
	}
	if all, err := acct.ListBucket(svc, rk, nil); err != nil || len(all) != 1 {
		t.Errorf("list buckets: got %+v, %v; want one", all, err)
	}
	_, err = acct.CreateBucket(svc, rk, (&verify.CreateBucketParams{}).SetMax(0).SetInterval(60))
	servertest.WantTwilioError(t, "a bucket of Max 0", err, 60200, 400)
	_, err = acct.CreateBucket(svc, rk, (&verify.CreateBucketParams{}).SetMax(1).SetInterval(86401))
	servertest.WantTwilioError(t, "a bucket over a day", err, 60200, 400)
	_, err = twilioGo(t, s, s.secret).CreateRateLimit(s.serviceSID, (&verify.CreateRateLimitParams{}).SetUniqueName("x"))
	servertest.WantTwilioError(t, "a rate limit made with an app key", err, 20003, 401)

	// Concurrency: 20 sends at once to 20 numbers, all naming user-1: exactly 3 pass.
	sendAs := func(user string) error {
		_, err := acct.CreateVerification(svc, (&verify.CreateVerificationParams{}).SetTo(servertest.NewPhone()).SetChannel("sms").
			SetRateLimits(map[string]any{"end_user_id": user}))
		return err
	}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = sendAs("user-1") }()
	}
	wg.Wait()
	passed := 0
	for _, err := range errs {
		if err == nil {
			passed++
			continue
		}
		servertest.WantTwilioError(t, "send over the bucket", err, 20429, 429)
	}
	if passed != 3 {
		t.Errorf("concurrent sends naming one value: %d passed, want exactly 3", passed)
	}
	if err := sendAs("user-2"); err != nil {
		t.Errorf("another value: got %v, want it admitted (its own bucket)", err)
	}
	if err := sendAs("user-1"); err == nil {
		t.Errorf("the spent value once more: admitted, want 20429")
	}
	_, err = acct.CreateVerification(svc, (&verify.CreateVerificationParams{}).SetTo(servertest.NewPhone()).SetChannel("sms").
		SetRateLimits(map[string]any{"no_such_limit": "x"}))
	servertest.WantTwilioError(t, "RateLimits naming no rate limit", err, 60200, 400)

	if err := acct.DeleteBucket(svc, rk, servertest.Str(b.Sid)); err != nil {
		t.Errorf("delete bucket: %v", err)
	}
	// Without buckets the rate limit limits nothing, as in Twilio.
	if err := sendAs("user-1"); err != nil {
		t.Errorf("a rate limit without buckets: got %v, want the send admitted", err)
	}
	if err := acct.DeleteRateLimit(svc, rk); err != nil {
		t.Errorf("delete rate limit: %v", err)
	}
	_, err = acct.FetchRateLimit(svc, rk)
	servertest.WantTwilioError(t, "fetch after delete", err, 20404, 404)
}
