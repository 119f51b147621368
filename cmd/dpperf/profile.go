package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/profiling"
	"github.com/dpperf/dpperf/profile/report"
	"github.com/dpperf/dpperf/profile/task"
)

const profileUsage = `Usage: dpperf profile <action> [flags] [arguments]

Actions:
  run       collect events from the running kernel (BPF or tracefs) and report
  analyze   report from trace text files (ftrace, trace-cmd report) or a
            CTF recording of dpperf record --tracepoint
  compare   latency amplification per stage between two JSON profiles
  paths     list the built-in paths, or print one as YAML

Run 'dpperf profile <action> -h' for its flags.
`

func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(stdout, profileUsage)
		if len(args) == 0 {
			return fail.Usagef("profile: no action given")
		}
		return nil
	}
	switch args[0] {
	case "run":
		return runProfileRun(ctx, args[1:], stdout, stderr)
	case "analyze":
		return runProfileAnalyze(ctx, args[1:], stdout, stderr)
	case "compare":
		return runProfileCompare(args[1:], stdout, stderr)
	case "paths":
		return runProfilePaths(args[1:], stdout, stderr)
	}
	return fail.Usagef("profile: unknown action %q (want run, analyze, compare or paths)", args[0])
}

// profileOutput are the report destinations shared by run and analyze:
// the report (text or --json) to stdout or -o FILE, an HTML report beside.
type profileOutput struct {
	*cli.Output
	html, text string
	quiet      bool
}

func (o *profileOutput) register(fs *flag.FlagSet) {
	o.Output = cli.AddOutput(fs, "profile/report/schema.md")
	fs.StringVar(&o.html, "html", "", "also write an HTML report to `FILE`")
	fs.StringVar(&o.text, "text", "", "also write the text report to `FILE` (with --json, which sends the JSON to stdout or -o)")
	fs.BoolVar(&o.quiet, "q", false, "no report on stdout (with --html or --text)")
}

// profileFlags are the flags that run and analyze share: the task's
// and the report's.
type profileFlags struct {
	fs  *flag.FlagSet
	tf  taskFlags
	out profileOutput
}

func newProfileFlags(name, synopsis string, stderr io.Writer) *profileFlags {
	p := &profileFlags{fs: cli.NewFlagSet(name, synopsis, stderr)}
	p.tf.register(p.fs)
	p.out.register(p.fs)
	return p
}

// parse parses args and returns the arguments after the flags. The
// former spelling --json FILE, whose FILE now arrives as an argument, is
// a usage error that gives the new one.
func (p *profileFlags) parse(args []string) ([]string, error) {
	rest, err := cli.Parse(p.fs, args)
	if err != nil {
		return nil, err
	}
	for _, a := range rest {
		if p.out.JSON && strings.HasSuffix(a, ".json") {
			return nil, cli.UsageError(p.fs, "--json takes no file: write the JSON profile with --json -o %s", a)
		}
	}
	return rest, nil
}

// taskFlags override fields of the task file.
type taskFlags struct {
	task string
	o    task.Overrides
}

func (t *taskFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.task, "task", "", "task specification (YAML, or the original profiler's .ini); flags below override it")
	fs.StringVar(&t.o.Path, "path", "", "path: block, nvme-tcp or a YAML file (default from task, else block)")
	fs.StringVar(&t.o.Device, "dev", "", "only this device (loop0, /dev/loop0 or major,minor)")
	fs.StringVar(&t.o.Type, "type", "", "only this I/O type: read, write or any")
	fs.StringVar(&t.o.Size, "size", "", "only this request size (4K) or range (4K-128K)")
	fs.StringVar(&t.o.GroupBy, "group", "", "group by, comma-separated: type,size,session,cpu")
	fs.StringVar(&t.o.Contents, "contents", "", "report contents, comma-separated: latency,throughput,breakdown,queue (default all)")
	fs.UintVar(&t.o.Sample, "sample", 0, "keep 1 of N requests")
	fs.DurationVar(&t.o.Interval, "interval", 0, "online mode: print a report every interval")
}

// load returns the task with flag overrides applied, its path and device.
func (t *taskFlags) load() (*profiling.Setup, error) { return profiling.Load(t.task, t.o) }

// emit writes the profile to the requested outputs.
func emit(p *analyze.Profile, tk *task.Task, out *profileOutput, stdout io.Writer) error {
	p.Restrict(tk.Report.Contents)
	cols := report.Columns(tk.Report.Aggregators)
	if out.html != "" {
		if err := atomicfile.Write(out.html, func(w io.Writer) error { return report.HTML(w, p, nil) }); err != nil {
			return err
		}
	}
	if out.text != "" {
		if err := atomicfile.Write(out.text, func(w io.Writer) error { return report.Text(w, p, cols) }); err != nil {
			return err
		}
	}
	if out.quiet && out.File == "" {
		return nil
	}
	if out.JSON {
		return out.Write(stdout, func(w io.Writer) error { return report.JSON(w, p) })
	}
	return out.Write(stdout, func(w io.Writer) error { return report.Text(w, p, cols) })
}

// intervalReport prints the profile of each interval of an online task
// with the columns cols.
func intervalReport(stdout io.Writer, cols ...string) func(*analyze.Profile) {
	return func(p *analyze.Profile) { _ = report.Text(stdout, p, cols) }
}
