// Command mutants runs dpperf on mutated copies of BPF objects, as a user
// with damaged or hostile files would: bit flips, truncation, zeroed and
// random runs of bytes, each seeded and reproducible. Every run has a
// time limit; the report counts the exit codes, the largest overrun of the
// limit, runs that had to be killed, stack traces, and the distinct
// messages of dpperf's own failures (exit 3), and lists any input error
// of an invalid program that exited otherwise than 2. It reads clocks, so
// `make evidence` runs it, never `make test`.
//
// Usage: mutants [-bin bin/dpperf] [-n 400] [-seed 1] [-limit 3s] [-out DIR] OBJECT...
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	bin := fs.String("bin", "bin/dpperf", "dpperf `BINARY`")
	n := fs.Int("n", 400, "mutated objects to make (each is run through every command)")
	seed := fs.Uint64("seed", 1, "seed of the mutations")
	limit := fs.Duration("limit", 3*time.Second, "--time-limit of the analyses")
	out := fs.String("out", "", "write the report to `DIR`/DATE-mutants.md (default: stdout only)")
	keep := fs.String("keep", "", "copy the mutants of notable runs (overrun, killed, exit 3, stack trace) into `DIR`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("want objects to mutate")
	}
	var origs []original
	for _, f := range fs.Args() {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		origs = append(origs, original{path: f, data: data, program: firstProgram(ctx, *bin, f)})
	}
	dir, err := os.MkdirTemp("", "mutants")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rng := rand.New(rand.NewPCG(*seed, 0x9e3779b97f4a7c15))
	rep := &report{limit: *limit, start: time.Now(), exits: map[string]map[int]int{}, failures: map[string]int{}}
	for i := 0; i < *n && ctx.Err() == nil; i++ {
		o := origs[rng.IntN(len(origs))]
		data, how := mutate(rng, o.data)
		path := filepath.Join(dir, fmt.Sprintf("m%04d.o", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		for _, c := range commands(*limit) {
			args := append(append([]string{}, c.args...), "--program", o.program, path)
			if c.name == "programs" {
				args = []string{"programs", path}
			}
			r := runOne(ctx, *bin, args, c.timed, *limit)
			r.mutant = fmt.Sprintf("%s %s", filepath.Base(o.path), how)
			if *keep != "" && rep.notable(r) {
				kept := filepath.Join(*keep, fmt.Sprintf("m%04d-%s", i, filepath.Base(o.path)))
				if err := os.WriteFile(kept, data, 0o644); err != nil {
					return err
				}
				r.mutant += " (" + kept + ")"
			}
			rep.add(c.name, r)
		}
		if (i+1)%25 == 0 {
			fmt.Fprintf(os.Stderr, "%d/%d mutants, %d runs, largest overrun %.2fs\n", i+1, *n, rep.runs, rep.overrun.Seconds())
		}
	}
	text := rep.markdown(*bin, *seed, fs.Args())
	fmt.Fprint(stdout, text)
	if *out != "" {
		name := filepath.Join(*out, time.Now().Format("2006-01-02")+"-mutants.md")
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type original struct {
	path, program string
	data          []byte
}

type command struct {
	name  string
	args  []string
	timed bool // has --time-limit
}

func commands(limit time.Duration) []command {
	l := limit.String()
	return []command{
		{"programs", nil, false},
		{"bound --naive", []string{"bound", "--naive", "--target", "x86-64"}, false},
		{"bound", []string{"bound", "--target", "x86-64", "--time-limit", l}, true},
		{"bound nfp", []string{"bound", "--target", "nfp-agilio-cx", "--metric", "bps", "--time-limit", l}, true},
		{"interface", []string{"interface", "--time-limit", l}, true},
	}
}

// mutate returns a damaged copy of data and says how it was damaged.
func mutate(rng *rand.Rand, data []byte) ([]byte, string) {
	b := append([]byte(nil), data...)
	switch k := rng.IntN(4); k {
	case 0:
		flips := 1 + rng.IntN(8)
		for range flips {
			i := rng.IntN(len(b))
			b[i] ^= 1 << rng.IntN(8)
		}
		return b, fmt.Sprintf("%d bit flips", flips)
	case 1:
		n := rng.IntN(len(b))
		return b[:n], fmt.Sprintf("truncated to %d bytes", n)
	default:
		at, n := rng.IntN(len(b)), 1+rng.IntN(64)
		n = min(n, len(b)-at)
		what := "zeroed"
		for i := at; i < at+n; i++ {
			if k == 2 {
				b[i] = 0
			} else {
				b[i] = byte(rng.Uint32())
				what = "random"
			}
		}
		return b, fmt.Sprintf("%d %s bytes at %d", n, what, at)
	}
}
