package http

import (
	"sync"
	"time"
)

// logLimiter lets one log line of a kind through per interval and counts the ones it
// holds back, so that a flood of bad requests (forged callbacks, say) cannot flood the
// log or slow the server with writing it; a metric counts each of them.
type logLimiter struct {
	interval time.Duration
	now      func() time.Time

	mu   sync.Mutex
	next time.Time
	held int
}

func newLogLimiter(interval time.Duration) *logLimiter {
	return &logLimiter{interval: interval, now: time.Now}
}

// allow reports whether a line may be written now, and how many were held back since the
// last one that was.
func (l *logLimiter) allow() (ok bool, held int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Before(l.next) {
		l.held++
		return false, 0
	}
	held, l.held = l.held, 0
	l.next = now.Add(l.interval)
	return true, held
}
