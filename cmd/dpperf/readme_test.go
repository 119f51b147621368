package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeCommand is a dpperf command line shown in README.md, with the
// output shown under it when it is a "$ dpperf" example.
type readmeCommand struct {
	args   []string
	shown  []string // output lines shown under a "$" example
	dollar bool
}

// readmeCommands extracts the dpperf command lines of README.md's code
// blocks (lines indented by four spaces), joining continuation lines.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []readmeCommand
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		l, ok := strings.CutPrefix(lines[i], "    ")
		if !ok {
			continue
		}
		dollar := strings.HasPrefix(l, "$ dpperf ")
		if !dollar && !strings.HasPrefix(l, "dpperf ") {
			continue
		}
		line := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		c := readmeCommand{args: strings.Fields(line)[1:], dollar: dollar}
		for dollar && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") && !strings.HasPrefix(lines[i+1], "    $") {
			i++
			c.shown = append(c.shown, strings.TrimSpace(lines[i]))
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// writtenFlags take a file the command writes, not one it reads.
var writtenFlags = map[string]bool{"--pcap": true, "--pprof": true, "--cdf": true, "--maps": true, "--output": true, "--dir": true, "--perfetto": true,
	"--html": true, "--text": true, "--write": true, "-o": true}

// TestReadmeCommands: every dpperf command README.md shows names files
// that exist once `make run` (here `make bpf`) has run, and every "$"
// example runs as written and prints what the README shows under it (the
// lines' leading words; figures may differ from machine to machine).
func TestReadmeCommands(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 8 {
		t.Fatalf("only %d commands found in README.md", len(cmds))
	}
	work := t.TempDir()
	ran := 0
	for _, c := range cmds {
		args := make([]string, len(c.args))
		for i, a := range c.args {
			args[i] = a
			switch {
			case i > 0 && writtenFlags[c.args[i-1]]:
				args[i] = filepath.Join(work, a) // written by the command
			case strings.Contains(a, "*"):
				m, _ := filepath.Glob(filepath.Join(work, a))
				if len(m) != 1 {
					t.Errorf("%v: %s matches %v", c.args, a, m)
					continue
				}
				args[i] = m[0]
			case strings.Contains(a, "/") && !strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
				p := a
				if !filepath.IsAbs(a) {
					p = filepath.Join("..", "..", a)
				}
				if _, err := os.Stat(p); err != nil {
					t.Errorf("README command %v names %s, which does not exist after make run", c.args, a)
				}
				args[i] = p
			}
		}
		if !c.dollar {
			continue
		}
		ran++
		out, errs, code := dpperf(t, args...)
		if code != 0 {
			t.Errorf("README example %v: exit %d: %s", c.args, code, errs)
			continue
		}
		for _, s := range c.shown {
			if s == "..." || strings.HasPrefix(s, "#") {
				continue
			}
			words := strings.Fields(s)
			lead := strings.Join(words[:min(2, len(words))], " ")
			if !strings.Contains(strings.Join(strings.Fields(out), " "), lead) {
				t.Errorf("README example %v shows %q, not in its output:\n%s", c.args, s, out)
			}
		}
	}
	if ran < 6 {
		t.Errorf("only %d examples run", ran)
	}
}
