package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/testenv/fixture"
)

// trace records what the loops of one test did, in order.
type trace struct {
	mu     sync.Mutex
	events []string
	ctxs   map[string]context.Context
}

func newTrace() *trace { return &trace{ctxs: map[string]context.Context{}} }

func (tr *trace) add(event string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.events = append(tr.events, event)
}

func (tr *trace) list() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.events)
}

// ctx is the context name's run got, once it runs.
func (tr *trace) ctx(name string) context.Context {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.ctxs[name]
}

// loop is a loop that records "run name" when it starts and "end name" once its context
// has ended, lingering a little before it returns, as a loop that writes what it holds
// does; a runner that does not wait for a phase lets the next one begin meanwhile.
func (tr *trace) loop(name string, stop phase) loop {
	return loop{name: name, stop: stop, run: func(ctx context.Context) error {
		tr.mu.Lock()
		tr.ctxs[name] = ctx
		tr.mu.Unlock()
		tr.add("run " + name)
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond)
		tr.add("end " + name)
		return ctx.Err()
	}}
}

// flushing is tr.loop with a flush that records "flush name" and whether the loop still
// ran at that moment.
func (tr *trace) flushing(name string, stop phase) loop {
	l := tr.loop(name, stop)
	l.flush = func(context.Context) error {
		state := "running"
		if ctx := tr.ctx(name); ctx == nil || ctx.Err() != nil {
			state = "stopped"
		}
		tr.add("flush " + name + " (" + state + ")")
		return nil
	}
	return l
}

// waitRunning waits until every named loop has started.
func (tr *trace) waitRunning(t *testing.T, names ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		events := tr.list()
		missing := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(events, "run "+n) })
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("loops %v never started; trace %v", missing, events)
		}
		time.Sleep(time.Millisecond)
	}
}

// stopEvents is the trace without the starts: what stopping did.
func (tr *trace) stopEvents() []string {
	return slices.DeleteFunc(tr.list(), func(e string) bool { return strings.HasPrefix(e, "run ") })
}

func TestLoops(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)

	t.Run("RunsEveryLoopThatIsOn", func(t *testing.T) {
		tr := newTrace()
		off := tr.flushing("off", 0)
		off.off = true
		stop := startLoops(t.Context(), quiet, []loop{tr.loop("a", 1), off, tr.loop("b", 0)})
		tr.waitRunning(t, "a", "b")
		stop(t.Context())
		for _, e := range tr.list() {
			if strings.HasSuffix(e, " off") || strings.HasPrefix(e, "flush off") {
				t.Errorf("got %q, want the loop that is off left alone", e)
			}
		}
		if got := tr.stopEvents(); !slices.Equal(got, []string{"end b", "end a"}) {
			t.Errorf("got %v, want both loops ended", got)
		}
	})

	t.Run("StopsPhaseByPhaseFlushingWhileTheLoopRuns", func(t *testing.T) {
		tr := newTrace()
		// Phases out of the table's order; a phase of two loops, one of them flushing.
		stop := startLoops(t.Context(), quiet, []loop{
			tr.flushing("last", 2), tr.loop("first", 0), tr.flushing("mid", 1), tr.loop("mid2", 1),
		})
		tr.waitRunning(t, "last", "first", "mid", "mid2")
		stop(t.Context())
		got := tr.stopEvents()
		// The two loops of a phase end together, in either order.
		if i := slices.Index(got, "end mid2"); i == 2 {
			got[2], got[3] = got[3], got[2]
		}
		want := []string{"end first", "flush mid (running)", "end mid", "end mid2", "flush last (running)", "end last"}
		if !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("LoopThatFailsIsLoggedAndTheOthersRunOn", func(t *testing.T) {
		tr := newTrace()
		logs := &fixture.SyncBuffer{}
		log := slog.New(slog.NewTextHandler(logs, nil))
		failed := make(chan struct{})
		broken := loop{name: "broken", run: func(context.Context) error {
			defer close(failed)
			return errors.New("boom")
		}}
		stop := startLoops(t.Context(), log, []loop{broken, tr.loop("steady", 0)})
		tr.waitRunning(t, "steady")
		<-failed
		if err := tr.ctx("steady").Err(); err != nil {
			t.Errorf("steady loop after the other failed: got %v, want it running", err)
		}
		stop(t.Context())
		if got := logs.Lines("broken stopped"); len(got) != 1 || !strings.Contains(got[0], "err=boom") {
			t.Errorf("got %q, want one line logging the failure", got)
		}
		// The context's end is how a loop is stopped, not a failure.
		if got := logs.Lines("steady"); len(got) != 0 {
			t.Errorf("got %q, want nothing logged of the stopped loop", got)
		}
	})

	t.Run("EndOfTheStartContextStopsNothing", func(t *testing.T) {
		tr := newTrace()
		type key struct{}
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "value"))
		stop := startLoops(ctx, quiet, []loop{tr.loop("a", 0)})
		tr.waitRunning(t, "a")
		cancel() // as SIGTERM does: the loops run on until the listeners have closed
		got := tr.ctx("a")
		if err := got.Err(); err != nil {
			t.Errorf("after the start context ended: got %v, want the loop running", err)
		}
		if v := got.Value(key{}); v != "value" {
			t.Errorf("value of the start context: got %v, want %q", v, "value")
		}
		stop(t.Context())
		if err := got.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("after stop: got %v, want %v", err, context.Canceled)
		}
	})

	t.Run("FlushPastTheDeadlineIsLoggedAndTheLoopStillStops", func(t *testing.T) {
		tr := newTrace()
		logs := &fixture.SyncBuffer{}
		log := slog.New(slog.NewTextHandler(logs, nil))
		l := tr.loop("writer", 0)
		l.flush = func(ctx context.Context) error {
			<-ctx.Done()
			return fmt.Errorf("close: %w", ctx.Err())
		}
		stop := startLoops(t.Context(), log, []loop{l})
		tr.waitRunning(t, "writer")
		sctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		stop(sctx)
		if got := logs.Lines("writer flush"); len(got) != 1 || !strings.Contains(got[0], "deadline exceeded") {
			t.Errorf("got %q, want one line logging the flush's failure", got)
		}
		if got := tr.stopEvents(); !slices.Equal(got, []string{"end writer"}) {
			t.Errorf("got %v, want the loop ended", got)
		}
	})
}
