package retentiontest

import (
	"fmt"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// statsQuery is one chart request: since, bucket and app.
type statsQuery struct {
	since  time.Time
	bucket time.Duration
	app    string
}

func (q statsQuery) String() string {
	return fmt.Sprintf("since %s bucket %s app %q", q.since, q.bucket, q.app)
}

// chartQueries span the purged and the kept history, by hours, days and three hours, every
// app or one, and a 15-minute chart within the retention.
func chartQueries() []statsQuery {
	return []statsQuery{
		{fixture.Base().Add(-72 * time.Hour), time.Hour, ""},
		{fixture.Base().Add(-72 * time.Hour), 24 * time.Hour, ""},
		{fixture.Base().Add(-70 * time.Hour), 3 * time.Hour, fixture.AppB},
		{fixture.Base().Add(-72 * time.Hour), time.Hour, otp.DefaultAppID},
		{fixture.Horizon(), 15 * time.Minute, ""},
	}
}

func chartsOf(e *fixture.Env) map[statsQuery][]history.StatBucket {
	e.T.Helper()
	out := map[statsQuery][]history.StatBucket{}
	for _, q := range chartQueries() {
		b, err := e.Store.Stats(e.Ctx, q.since, q.bucket, q.app)
		if err != nil {
			e.T.Fatalf("Stats(%s): %v", q, err)
		}
		out[q] = b
	}
	return out
}

// conversionQueries are hour-aligned starts in the purged history, and prefix settings the
// same as and coarser than the one the rollups were counted by.
var conversionQueries = []struct {
	since time.Time
	drop  int
}{
	{fixture.Base().Add(-72 * time.Hour), 4}, {fixture.Base().Add(-60 * time.Hour), 4}, {fixture.Base().Add(-72 * time.Hour), 6}, {fixture.Horizon(), 4},
}

func conversion(e *fixture.Env) [][]fraud.PrefixCount {
	e.T.Helper()
	var out [][]fraud.PrefixCount
	for _, q := range conversionQueries {
		c, err := e.Store.FraudConversion(e.Ctx, q.since, q.drop)
		if err != nil {
			e.T.Fatalf("FraudConversion(%s, %d): %v", q.since, q.drop, err)
		}
		out = append(out, c)
	}
	return out
}
