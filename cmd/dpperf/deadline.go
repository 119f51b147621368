package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// The analyses look at their context between steps, so a time limit or a
// signal ends them with what they have. A step that runs long on some
// input would still hold the process past that moment; the watchdog is
// the backstop: once a run should have ended, it gets a grace period to
// write what it has, and the process then exits without waiting for it.

// grace is how long a run may take, after its time limit or a signal, to
// return and write its partial result, unless it asks for longer
// (setStopGrace).
const grace = 900 * time.Millisecond

type watchKey struct{}

// watchdog tells main when the run must be over.
type watchdog struct {
	limits chan time.Time // deadlines subcommands set: time limit plus grace
	// stopGrace is how long the run may take after a signal, in ns.
	stopGrace atomic.Int64
}

func newWatchdog(ctx context.Context) (context.Context, *watchdog) {
	w := &watchdog{limits: make(chan time.Time, 4)}
	w.stopGrace.Store(int64(grace))
	return context.WithValue(ctx, watchKey{}, w), w
}

// setStopGrace gives the run d after a signal, instead of grace, to end
// on its own: a run that holds kernel state (tracefs instances, probes)
// or still has a peer's records to fetch must not be abandoned before it
// has let go of them.
func setStopGrace(ctx context.Context, d time.Duration) {
	if w, ok := ctx.Value(watchKey{}).(*watchdog); ok {
		w.stopGrace.Store(int64(max(d, grace)))
	}
}

// limitRun returns ctx with the time limit applied (none when limit is 0)
// and tells main's watchdog that the process must end by limit + grace.
// Tests call run directly, without a watchdog; the context still ends.
func limitRun(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	if limit <= 0 {
		return context.WithCancel(ctx)
	}
	if w, ok := ctx.Value(watchKey{}).(*watchdog); ok {
		select {
		case w.limits <- time.Now().Add(limit + grace):
		default:
		}
	}
	return context.WithTimeout(ctx, limit)
}

// errOverrun is what main reports when a run outlives its end.
var errOverrun = errors.New("the analysis did not stop in time; exited without its result")

// wait returns run's error, or errOverrun once the run has outlived a
// signal (ctx done) or a time limit by the grace period.
func (w *watchdog) wait(ctx context.Context, done <-chan error) error {
	var hard <-chan time.Time
	var sig <-chan struct{} = ctx.Done()
	for {
		select {
		case err := <-done:
			return err
		case at := <-w.limits:
			if hard == nil { // the first limit a run sets is its end
				t := time.NewTimer(time.Until(at))
				defer t.Stop()
				hard = t.C
			}
		case <-sig:
			sig = nil
			hard = time.After(time.Duration(w.stopGrace.Load()))
		case <-hard:
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w (%w)", errOverrun, context.Canceled)
			}
			return fmt.Errorf("time limit passed: %w", errOverrun)
		}
	}
}

// stoppedEarly explains an error of a step that the time limit ended
// before the run had any result to report.
func stoppedEarly(ctx context.Context, err error, limit time.Duration) error {
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("time limit of %v reached before any result: %w", limit, err)
	}
	return err
}

// remaining is the time left before ctx's deadline, or 0 without one.
func remaining(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Millisecond)
	}
	return 0
}
