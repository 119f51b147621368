package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

// killAfter is how long a run may last at all before it is killed and
// counted as hung.
const killAfter = 60 * time.Second

type result struct {
	mutant string
	args   []string
	code   int
	wall   time.Duration
	killed bool
	stderr string // last line
	trace  bool   // a goroutine dump or "panic:" on stderr
}

// runOne runs dpperf once and records how it ended.
func runOne(ctx context.Context, bin string, args []string, timed bool, limit time.Duration) result {
	cctx, cancel := context.WithTimeout(ctx, killAfter)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	r := result{args: args, wall: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		r.code = -1
	}
	r.killed = cctx.Err() != nil && ctx.Err() == nil
	s := errb.String()
	r.trace = strings.Contains(s, "goroutine ") && strings.Contains(s, ".go:") || strings.Contains(s, "panic:")
	lines := strings.Split(strings.TrimSpace(s), "\n")
	r.stderr = lines[len(lines)-1]
	return r
}

// firstProgram names the first program dpperf lists in an object.
func firstProgram(ctx context.Context, bin, path string) string {
	out, err := exec.CommandContext(ctx, bin, "programs", "--json", path).Output()
	if err != nil {
		return ""
	}
	var doc struct {
		Programs []struct {
			Name string `json:"name"`
		} `json:"programs"`
	}
	if json.Unmarshal(out, &doc) != nil || len(doc.Programs) == 0 {
		return ""
	}
	return doc.Programs[0].Name
}

type report struct {
	limit    time.Duration
	start    time.Time
	runs     int
	exits    map[string]map[int]int // command → exit code → runs
	overrun  time.Duration          // largest wall time beyond the limit, timed runs
	worst    result
	slowest  time.Duration // largest wall time of untimed runs
	killed   []result
	traces   []result
	failures map[string]int // messages of exit 3, by kind
	invalid3 []result       // invalid programs that did not exit 2
}

// notable reports a run worth keeping its mutant for.
func (r *report) notable(res result) bool {
	timed := strings.Contains(strings.Join(res.args, " "), "--time-limit")
	return res.killed || res.trace || res.code == 3 || timed && res.wall > r.limit+time.Second
}

func (r *report) add(cmd string, res result) {
	r.runs++
	if r.exits[cmd] == nil {
		r.exits[cmd] = map[int]int{}
	}
	r.exits[cmd][res.code]++
	if res.killed {
		r.killed = append(r.killed, res)
	}
	if res.trace {
		r.traces = append(r.traces, res)
	}
	if strings.Contains(strings.Join(res.args, " "), "--time-limit") {
		if over := res.wall - r.limit; over > r.overrun {
			r.overrun, r.worst = over, res
		}
	} else {
		r.slowest = max(r.slowest, res.wall)
	}
	if res.code == 3 {
		r.failures[kind(res.stderr)]++
	}
	if strings.Contains(res.stderr, ": program ") && strings.Contains(res.stderr, ", insn ") && res.code != 2 {
		r.invalid3 = append(r.invalid3, res)
	}
}

// kind strips a message of its file names and numbers, so that messages
// of one kind count together.
func kind(msg string) string {
	msg = strings.TrimPrefix(msg, "dpperf: ")
	if i := strings.Index(msg, ".o: "); i >= 0 {
		msg = msg[i+4:]
	}
	var b strings.Builder
	digits := false
	for _, c := range msg {
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('N')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(c)
	}
	s := b.String()
	if len(s) > 140 {
		s = s[:140] + "…"
	}
	return s
}

func (r *report) markdown(bin string, seed uint64, objs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Mutated objects through dpperf, %s\n\n", r.start.Format("2006-01-02"))
	fmt.Fprintf(&b, "`go run ./internal/cmd/mutants -bin %s -seed %d -limit %v` over %d objects; %d runs in %.0f s.\n\n",
		bin, seed, r.limit, len(objs), r.runs, time.Since(r.start).Seconds())
	fmt.Fprintf(&b, "- largest overrun of the time limit: **%.2f s**", r.overrun.Seconds())
	if r.worst.mutant != "" {
		fmt.Fprintf(&b, " (`%s`, %s)", strings.Join(r.worst.args[:len(r.worst.args)-1], " "), r.worst.mutant)
	}
	fmt.Fprintf(&b, "\n- longest run without a time limit: %.2f s\n", r.slowest.Seconds())
	fmt.Fprintf(&b, "- killed after %v: %d; stack traces: %d; invalid programs not exiting 2: %d\n\n", killAfter, len(r.killed), len(r.traces), len(r.invalid3))
	b.WriteString("| command | exit 0 | exit 1 | exit 2 | exit 3 | other |\n|---|---|---|---|---|---|\n")
	cmds := make([]string, 0, len(r.exits))
	for c := range r.exits {
		cmds = append(cmds, c)
	}
	sort.Strings(cmds)
	for _, c := range cmds {
		e := r.exits[c]
		other := 0
		for code, n := range e {
			if code < 0 || code > 3 {
				other += n
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", c, e[0], e[1], e[2], e[3], other)
	}
	if len(r.failures) > 0 {
		b.WriteString("\nExit 3 (dpperf's own failures), by message:\n\n")
		var ks []string
		for k := range r.failures {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool { return r.failures[ks[i]] > r.failures[ks[j]] })
		for _, k := range ks {
			fmt.Fprintf(&b, "- %d × %s\n", r.failures[k], k)
		}
	}
	for _, list := range []struct {
		what string
		rs   []result
	}{{"Killed", r.killed}, {"Stack traces", r.traces}, {"Invalid programs not exiting 2", r.invalid3}} {
		if len(list.rs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n\n", list.what)
		for _, x := range list.rs {
			fmt.Fprintf(&b, "- `%s` (%s): exit %d after %.1f s: %s\n", strings.Join(x.args[:len(x.args)-1], " "), x.mutant, x.code, x.wall.Seconds(), x.stderr)
		}
	}
	return b.String()
}
