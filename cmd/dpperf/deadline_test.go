package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dpperf/dpperf/internal/fail"
)

// A run that never returns after a signal is abandoned with an error that
// says so; one that returns gives its own error.
func TestWatchdogAfterSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ctx, dog := newWatchdog(ctx)
	cancel()
	err := dog.wait(ctx, make(chan error)) // a run stuck for good
	if !errors.Is(err, errOverrun) || fail.ExitCode(err) != fail.ExitInterrupted {
		t.Fatalf("error %v (exit %d), want an overrun after the interrupt", err, fail.ExitCode(err))
	}
	done := make(chan error, 1)
	done <- context.Canceled
	if err := dog.wait(ctx, done); err != context.Canceled {
		t.Fatalf("error %v, want the run's own", err)
	}
}

// A run that holds kernel state asks for more time after a signal; less
// than the default grace is the default.
func TestStopGrace(t *testing.T) {
	ctx, dog := newWatchdog(context.Background())
	setStopGrace(ctx, time.Minute)
	if got := time.Duration(dog.stopGrace.Load()); got != time.Minute {
		t.Errorf("stop grace %v, want 1m", got)
	}
	setStopGrace(ctx, time.Millisecond)
	if got := time.Duration(dog.stopGrace.Load()); got != grace {
		t.Errorf("stop grace %v, want the default %v", got, grace)
	}
}

// A run that sets a time limit and outlives it by the grace period is
// abandoned; the limit is the first one the run sets.
func TestWatchdogAfterTimeLimit(t *testing.T) {
	ctx, dog := newWatchdog(context.Background())
	lctx, cancel := limitRun(ctx, 1) // 1 ns
	defer cancel()
	<-lctx.Done()
	err := dog.wait(ctx, make(chan error))
	if !errors.Is(err, errOverrun) || fail.ExitCode(err) != fail.ExitOther {
		t.Fatalf("error %v (exit %d), want an overrun of the time limit", err, fail.ExitCode(err))
	}
}

// A panic in guarded work is an internal error naming where it happened.
func TestGuardTurnsPanicsIntoErrors(t *testing.T) {
	err := fail.Guard(func() error {
		var counts []int
		for i := range 3 {
			counts[i]++ // index out of range
		}
		return nil
	})
	var ie *fail.InternalError
	if !errors.As(err, &ie) || fail.ExitCode(err) != fail.ExitOther || ie.Where == "" {
		t.Fatalf("error %v, want an internal error with its place", err)
	}
}
