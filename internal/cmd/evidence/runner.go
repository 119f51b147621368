package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dpperf/dpperf/bound"
)

// program is one program of an object: OBJECT or OBJECT:PROGRAM.
type program struct{ object, prog string }

func (p program) name() string {
	if p.prog != "" {
		return p.prog
	}
	return strings.TrimSuffix(filepath.Base(p.object), ".o")
}

func parsePrograms(args []string) []program {
	var ps []program
	for _, a := range args {
		obj, prog, _ := strings.Cut(a, ":")
		ps = append(ps, program{obj, prog})
	}
	return ps
}

// runner runs dpperf bound --measure.
type runner struct {
	bin, target string
	maxChecks   int
}

// once bounds p, replays its example and adds the outcome to row.
func (r *runner) once(ctx context.Context, p program, row *Row) error {
	args := []string{"bound", "--json", "--workers", "1", "--measure", "--max-checks", fmt.Sprint(r.maxChecks), "--target", r.target, p.object}
	if p.prog != "" {
		args = append(args, "--program", p.prog)
	}
	out, err := r.dpperf(ctx, args...)
	if err != nil {
		return err
	}
	var res bound.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("bound JSON: %w", err)
	}
	row.add(&res)
	return nil
}

// calibrate measures this machine's costs for --target host.
func (r *runner) calibrate(ctx context.Context) error {
	_, err := r.dpperf(ctx, "targets", "calibrate", "--host")
	return err
}

// dpperf runs the binary with args and returns its stdout; an error
// names the command and carries its stderr.
func (r *runner) dpperf(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", r.bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
