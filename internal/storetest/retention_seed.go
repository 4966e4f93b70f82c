package storetest

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/retention"
)

// keep is the suite's history retention: two days before base, cut at the hour.
const keep = 48 * time.Hour

// straddle is how long before the horizon the suite's straddling verification was created.
const straddle = 3 * time.Minute

// horizon is where the suite's history is cut.
func horizon() time.Time { return base().Add(-keep) }

// idAt is a UUIDv7 made at t, as the service makes ids when it creates a row.
func idAt(t time.Time) string {
	u := uuid.Must(uuid.NewV7())
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	return u.String()
}

// lifecycleSeed is what seedLifecycle wrote: rows that must go and rows that must stay.
type lifecycleSeed struct {
	oldSends, newSends                 []string
	oldVerifications, newVerifications []string
	// sendTimes holds every send's time by its id.
	sendTimes map[string]time.Time
	// straddling is a verification created before the horizon whose approving check came
	// after it: it stays, with that attempt, while its send goes.
	straddling string
}

// seedLifecycle writes three days of history before base in two apps, a send every 50
// minutes: sends that went out, failed, are still sending and were refused (blocked by two
// rules, duplicate),
// approvals in the send's hour and in the next, all to numbers under three prefixes.
func seedLifecycle(e *env) lifecycleSeed {
	e.t.Helper()
	s := lifecycleSeed{sendTimes: map[string]time.Time{}}
	start := base().Add(-72 * time.Hour).Add(7 * time.Minute)
	for i := 0; start.Add(time.Duration(i) * 50 * time.Minute).Before(base().Add(-time.Hour)); i++ {
		at := start.Add(time.Duration(i) * 50 * time.Minute)
		app := otp.DefaultAppID
		if i%3 == 2 {
			app = appB
		}
		phone := fmt.Sprintf("+8190%d%07d", 111+111*(i%3), i)
		p := params(phone, "111111", at)
		p.AppID, p.NewVerificationID, p.SendID = app, idAt(at), idAt(at)
		v := e.send(p).Verification
		s.sendTimes[p.SendID] = at
		old, oldV := at.Before(horizon()), at.Before(horizon())
		switch i % 4 {
		case 1:
			e.finishAs(p, otp.SendFailed)
		case 2:
			e.finishAs(p, otp.SendSent)
			checked := at.Add(time.Duration(i%5) * time.Minute)
			e.checkApp(app, v.ID, "111111", checked)
			oldV = checked.Before(horizon()) // an approval after the horizon keeps its verification
		case 3: // still sending
		default:
			e.finishAs(p, otp.SendSent)
		}
		for j, d := range []otp.DeniedSend{
			{Status: otp.SendBlocked, Reason: "phone 1/1m"},
			{Status: otp.SendBlocked, Reason: "fraud_guard prefix " + fraud.Prefix(phone, 4)},
			{Status: otp.SendDuplicate, Reason: "duplicate 1/5s"},
		} {
			if (i+j)%2 == 0 {
				d.Time = at.Add(time.Duration(j+1) * time.Second)
				d.ID, d.AppID, d.Phone, d.ClientIP = idAt(d.Time), app, phone, "192.0.2.1"
				e.Denied.RecordDenied(d)
				s.sendTimes[d.ID] = d.Time
				if old {
					s.oldSends = append(s.oldSends, d.ID)
				} else {
					s.newSends = append(s.newSends, d.ID)
				}
			}
		}
		if old {
			s.oldSends = append(s.oldSends, p.SendID)
		} else {
			s.newSends = append(s.newSends, p.SendID)
		}
		if oldV {
			s.oldVerifications = append(s.oldVerifications, v.ID)
		} else {
			s.newVerifications = append(s.newVerifications, v.ID)
		}
	}
	at := horizon().Add(-straddle)
	p := params("+819044400001", "222222", at)
	p.NewVerificationID, p.SendID = idAt(at), idAt(at)
	v := e.send(p).Verification
	e.finishAs(p, otp.SendSent)
	e.checkApp(otp.DefaultAppID, v.ID, "222222", horizon().Add(time.Minute))
	s.oldSends, s.straddling, s.sendTimes[p.SendID] = append(s.oldSends, p.SendID), v.ID, at
	e.flush()
	return s
}

// finishAs records how p's send ended, without flushing.
func (e *env) finishAs(p otp.BeginSend, status otp.SendStatus) {
	e.t.Helper()
	if err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, Status: status, Now: p.Now}); err != nil {
		e.t.Fatalf("FinishSend: %v", err)
	}
}

// checkApp checks code for a verification of app at at.
func (e *env) checkApp(app, id, code string, at time.Time) {
	e.t.Helper()
	if _, _, err := e.Store.Check(e.ctx, otp.CheckRef{AppID: app, ID: id, ClientIP: "198.51.100.7", Now: at}, decideCode(code, at)); err != nil {
		e.t.Fatalf("Check(%s): %v", id, err)
	}
}

// job is a lifecycle job over the store at base, with small batches so that every
// target takes several statements.
func (e *env) job(opts retention.Options) *retention.Job {
	if opts.Retention == 0 {
		opts.Retention = keep
	}
	opts.Batch = 7
	j := retention.New(e.lifecycle(), slog.New(slog.DiscardHandler), opts)
	j.Now = base
	return j
}

// pass runs one pass and fails the test unless it held the lock and succeeded.
func (e *env) pass(j *retention.Job) retention.Report {
	e.t.Helper()
	r, err := j.Pass(e.ctx)
	if err != nil || r.Skipped {
		e.t.Fatalf("Pass: got %+v, %v; want a pass that held the lock", r, err)
	}
	return r
}

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
		{base().Add(-72 * time.Hour), time.Hour, ""},
		{base().Add(-72 * time.Hour), 24 * time.Hour, ""},
		{base().Add(-70 * time.Hour), 3 * time.Hour, appB},
		{base().Add(-72 * time.Hour), time.Hour, otp.DefaultAppID},
		{horizon(), 15 * time.Minute, ""},
	}
}

func (e *env) charts() map[statsQuery][]history.StatBucket {
	e.t.Helper()
	out := map[statsQuery][]history.StatBucket{}
	for _, q := range chartQueries() {
		b, err := e.History.Stats(e.ctx, q.since, q.bucket, q.app)
		if err != nil {
			e.t.Fatalf("Stats(%s): %v", q, err)
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
	{base().Add(-72 * time.Hour), 4}, {base().Add(-60 * time.Hour), 4}, {base().Add(-72 * time.Hour), 6}, {horizon(), 4},
}

func (e *env) conversion() [][]fraud.PrefixCount {
	e.t.Helper()
	var out [][]fraud.PrefixCount
	for _, q := range conversionQueries {
		c, err := e.Fraud.FraudConversion(e.ctx, q.since, q.drop)
		if err != nil {
			e.t.Fatalf("FraudConversion(%s, %d): %v", q.since, q.drop, err)
		}
		out = append(out, c)
	}
	return out
}
