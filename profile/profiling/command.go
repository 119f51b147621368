package profiling

import (
	"context"
	"io"
	"os/exec"

	"github.com/dpperf/dpperf/internal/fail"
)

// command is the command being profiled, if any.
type command struct {
	done chan struct{} // closed when it has ended
	err  error         // its failure; read after done
}

// startCommand starts args (none: nothing) with its output to out; it is
// killed when ctx ends, and its end calls cancel.
func startCommand(ctx context.Context, cancel context.CancelFunc, args []string, out io.Writer) (*command, error) {
	c := &command{done: make(chan struct{})}
	if len(args) == 0 {
		close(c.done)
		return c, nil
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fail.Usagef("profile run: start %s: %v", args[0], err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
		cancel()
	}()
	return c, nil
}

// wait waits for the command to end and returns its failure.
func (c *command) wait() error {
	<-c.done
	return c.err
}
