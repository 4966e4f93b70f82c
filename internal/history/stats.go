package history

import (
	"fmt"
	"time"

	"otpgate/internal/otp"
)

// StatBucket counts what happened in [Start, Start+bucket).
type StatBucket struct {
	Start time.Time
	// Sends counts sends that were allowed (sending, sent, failed or unknown): each was
	// let through to the provider and may have cost an SMS.
	Sends int
	// Failed counts sends the provider refused or did not answer in time; unknown sends,
	// whose answer was lost with a stopped server, are not among them.
	Failed int
	// Blocked counts blocked sends by their reason.
	Blocked    map[string]int
	Duplicates int
	// Approvals counts approved checks.
	Approvals int
	// ApprovalRatio is Approvals/Sends (0 without sends); a falling ratio hints at SMS pumping.
	ApprovalRatio float64
}

// StatRange checks a Stats request and returns its first bucket's start and the
// number of buckets up to the one holding now. Errors: *otp.ErrInvalidRequest.
func StatRange(since, now time.Time, bucket time.Duration) (start time.Time, n int, err error) {
	if bucket < time.Minute || bucket%time.Second != 0 {
		return time.Time{}, 0, &otp.ErrInvalidRequest{Fields: map[string]string{"bucket": "must be whole seconds, at least a minute"}}
	}
	start = BucketStart(since, bucket)
	n = int(BucketStart(now, bucket).Sub(start)/bucket) + 1
	if n < 1 || n > MaxStatBuckets {
		return time.Time{}, 0, &otp.ErrInvalidRequest{Fields: map[string]string{"since": fmt.Sprintf("must lie in the last %d buckets", MaxStatBuckets)}}
	}
	return start, n, nil
}

// BucketStart is the start of the bucket holding t: a whole multiple of bucket since the Unix epoch.
func BucketStart(t time.Time, bucket time.Duration) time.Time {
	secs, b := t.Unix(), int64(bucket/time.Second)
	return time.Unix(secs-((secs%b)+b)%b, 0).UTC()
}

// StatCounter sums history into the buckets of one Stats answer, so that every
// store sorts and counts alike; a store only feeds it its rows.
type StatCounter struct {
	start   time.Time
	bucket  time.Duration
	buckets []StatBucket
}

// NewStatCounter checks the range with StatRange and returns a counter holding every
// bucket from the one holding since to the one holding now, empty.
// Errors: *otp.ErrInvalidRequest, as StatRange.
func NewStatCounter(since, now time.Time, bucket time.Duration) (*StatCounter, error) {
	start, n, err := StatRange(since, now, bucket)
	if err != nil {
		return nil, err
	}
	c := &StatCounter{start: start, bucket: bucket, buckets: make([]StatBucket, n)}
	for i := range c.buckets {
		c.buckets[i] = StatBucket{Start: start.Add(time.Duration(i) * bucket), Blocked: map[string]int{}}
	}
	return c, nil
}

// Range is the time the buckets cover: [from, to).
func (c *StatCounter) Range() (from, to time.Time) {
	return c.start, c.start.Add(time.Duration(len(c.buckets)) * c.bucket)
}

// at is the bucket holding t, or nil outside the range.
func (c *StatCounter) at(t time.Time) *StatBucket {
	if t.Before(c.start) {
		return nil
	}
	if i := int(BucketStart(t, c.bucket).Sub(c.start) / c.bucket); i < len(c.buckets) {
		return &c.buckets[i]
	}
	return nil
}

// AddSends counts n sends of one status and reason made at t; a time outside the
// range is not counted.
func (c *StatCounter) AddSends(t time.Time, status otp.SendStatus, reason string, n int) {
	b := c.at(t)
	if b == nil {
		return
	}
	switch status {
	case otp.SendBlocked:
		b.Blocked[reason] += n
	case otp.SendDuplicate:
		b.Duplicates += n
	case otp.SendFailed:
		b.Failed += n
		b.Sends += n
	default:
		b.Sends += n
	}
}

// AddApprovals counts n approved checks made at t; a time outside the range is not counted.
func (c *StatCounter) AddApprovals(t time.Time, n int) {
	if b := c.at(t); b != nil {
		b.Approvals += n
	}
}

// AddBucket adds the counts of a finer bucket, such as an hour into its day; the
// finer bucket must lie inside one of c's, as it does when c's bucket is a multiple of it.
func (c *StatCounter) AddBucket(from StatBucket) {
	b := c.at(from.Start)
	if b == nil {
		return
	}
	b.Sends += from.Sends
	b.Failed += from.Failed
	b.Duplicates += from.Duplicates
	b.Approvals += from.Approvals
	for reason, n := range from.Blocked {
		b.Blocked[reason] += n
	}
}

// Buckets returns the counts, oldest first, with their approval ratios; call it last.
func (c *StatCounter) Buckets() []StatBucket {
	for i := range c.buckets {
		if b := &c.buckets[i]; b.Sends > 0 {
			b.ApprovalRatio = float64(b.Approvals) / float64(b.Sends)
		}
	}
	return c.buckets
}
