package profiling

import (
	"context"
	"io"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/internal/fail"
)

// stopWait is how long a command has, after SIGINT, to end on its own.
const stopWait = 5 * time.Second

// command is the command being profiled, if any.
type command struct {
	done chan struct{} // closed when it has ended
	err  error         // its failure; read after done
}

// startCommand starts args (none: nothing) with its output to out, in a
// process group of its own; its end calls cancel. When ctx ends the group
// gets SIGINT, as a terminal's Ctrl-C would give it, and SIGKILL after
// stopWait. Whatever of the group outlives the command is killed too:
// fio's job processes, say, which a kill of fio alone would leave running.
func startCommand(ctx context.Context, cancel context.CancelFunc, args []string, out io.Writer) (*command, error) {
	c := &command{done: make(chan struct{})}
	if len(args) == 0 {
		close(c.done)
		return c, nil
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGINT) }
	cmd.WaitDelay = stopWait
	if err := cmd.Start(); err != nil {
		return nil, fail.Usagef("profile run: start %s: %v", args[0], err)
	}
	go func() {
		c.err = cmd.Wait()
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
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
