package fail

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{flag.ErrHelp, ExitOK},
		{Usagef("bad flag"), ExitInput},
		{fmt.Errorf("measure: %w", NeedsRootf("needs root")), ExitNeedsRoot},
		{fmt.Errorf("explore: %w", context.Canceled), ExitInterrupted},
		{errors.New("solver crashed"), ExitOther},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
