package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/collect"
	"github.com/dpperf/dpperf/profile/path"
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
	*outputFlags
	html, text string
	quiet      bool
}

func (o *profileOutput) register(fs *flag.FlagSet) {
	o.outputFlags = addOutputFlags(fs, "profile/report/schema.md")
	fs.StringVar(&o.html, "html", "", "also write an HTML report to `FILE`")
	fs.StringVar(&o.text, "text", "", "also write the text report to `FILE` (with --json, which sends the JSON to stdout or -o)")
	fs.BoolVar(&o.quiet, "q", false, "no report on stdout (with --html or --text)")
}

// checkOldJSON turns the former spelling --json FILE, whose FILE now
// arrives as an argument, into a usage error that gives the new one.
func (o *profileOutput) checkOldJSON(fs *flag.FlagSet, args []string) error {
	for _, a := range args {
		if o.json && strings.HasSuffix(a, ".json") {
			return usageError(fs, "--json takes no file: write the JSON profile with --json -o %s", a)
		}
	}
	return nil
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

// load returns the task with flag overrides applied and the path.
func (t *taskFlags) load() (*task.Task, *path.Path, error) {
	tk, err := task.Load(t.task, t.o)
	if err != nil {
		var fe *task.FlagError
		if errors.As(err, &fe) {
			return nil, nil, fail.Usagef("%v", err)
		}
		return nil, nil, fail.Input(t.task, err)
	}
	p, err := path.Lookup(tk.Path)
	if err != nil {
		return nil, nil, fail.Input("", err)
	}
	return tk, p, nil
}

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
	if out.quiet && out.file == "" {
		return nil
	}
	if out.json {
		return out.write(stdout, func(w io.Writer) error { return report.JSON(w, p) })
	}
	return out.write(stdout, func(w io.Writer) error { return report.Text(w, p, cols) })
}

func runProfileAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("profile analyze", "profile analyze [flags] TRACE... | RECORDING-DIR", stderr)
	var tf taskFlags
	var out profileOutput
	tf.register(fs)
	out.register(fs)
	input := fs.String("input", "", "CTF recording directory of dpperf record --tracepoint (same as giving it as the argument)")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := out.checkOldJSON(fs, files); err != nil {
		return err
	}
	if *input != "" {
		files = append(files, *input)
	}
	if len(files) == 0 {
		return fail.Usagef("profile analyze: no trace file or recording given")
	}
	tk, p, err := tf.load()
	if err != nil {
		return err
	}
	dev, err := collect.ResolveDev(tk.Workload.Device)
	if err != nil {
		return fail.Input(tf.task, err)
	}
	opt := analyze.OptionsFor(tk, p, dev)
	if tk.Profiling.Mode == "online" {
		opt.Interval = time.Duration(tk.Profiling.Interval)
		opt.OnInterval = func(a *analyze.Aggregator) {
			ip := analyze.Summarize(a, p, tk.Profiling.Sample)
			ip.Source = "interval"
			ip.Restrict(tk.Report.Contents)
			_ = report.Text(stdout, ip, report.Columns{"avg", "p50", "p99"})
		}
	}
	spill, finishSpill, err := openSpill(tk, p, stderr)
	if err != nil {
		return err
	}
	opt.Spill = spill
	src, err := openTraceInput(files, p)
	if err != nil {
		return err
	}
	defer src.Close()
	agg, stats, err := analyze.Run(ctx, src, opt)
	if err != nil {
		return fail.Input(src.Current(), err)
	}
	if err := finishSpill(); err != nil {
		return err
	}
	prof := analyze.Summarize(agg, p, tk.Profiling.Sample)
	prof.Source = strings.Join(files, ",")
	prof.Filter = analyze.FilterText(tk, dev)
	prof.GroupBy = tk.Report.GroupBy
	lost := src.Lost()
	prof.Counts = analyze.Counts{BuildStats: stats, Lost: lost, Analyzed: agg.Records()}
	for i, e := range p.Events {
		info := analyze.EventInfo{Name: e.Name, Probe: probeName(&e), Observed: src.Seen()[i]}
		if !info.Observed {
			info.Reason = "not in the trace"
		}
		prof.Events = append(prof.Events, info)
	}
	prof.SetEventCounts()
	if lost > 0 {
		prof.Warnings = append(prof.Warnings, fmt.Sprintf("the kernel lost %d events; some requests are missing or merged", lost))
	}
	if ctx.Err() != nil {
		prof.Warnings = append(prof.Warnings, "interrupted: partial profile")
	}
	return emit(prof, tk, &out, stdout)
}

// openSpill starts the record file of a task whose buffer spills to disk
// (nil when it does not); finish commits it and says where it went.
func openSpill(tk *task.Task, p *path.Path, stderr io.Writer) (*analyze.RecordWriter, func() error, error) {
	if tk.Profiling.Buffer.WhenFull != "spill" {
		return nil, func() error { return nil }, nil
	}
	name := filepath.Join(tk.Profiling.Buffer.SpillDir, "records-"+p.Name+".csv")
	f, err := atomicfile.Create(name)
	if err != nil {
		return nil, nil, err
	}
	rw := analyze.NewRecordWriter(f, p)
	return rw, func() error {
		if err := rw.Close(); err != nil {
			f.Abort()
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := f.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "profile: records written to %s\n", name)
		return nil
	}, nil
}

func probeName(e *path.Event) string {
	if e.Tracepoint != "" {
		return e.Tracepoint
	}
	return "kprobe:" + e.Kprobe
}

func runProfileCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("profile compare", "profile compare [flags] BASE.json LOADED.json", stderr)
	out := addOutputFlags(fs, "profile/report/schema.md")
	htmlOut := fs.String("html", "", "also write an HTML report with the LAD chart to `FILE`")
	failAbove := fs.Float64("fail-above", 0, "exit 1 when any group's LAD over the whole span (Q→C on the block path) exceeds this")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return fail.Usagef("profile compare: want two JSON profiles, got %d arguments", len(files))
	}
	var profs [2]*analyze.Profile
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return fail.Input(name, err)
		}
		profs[i], err = report.ReadProfile(f)
		f.Close()
		if err != nil {
			return fail.Input(name, err)
		}
		if c := profs[i].Contents; !c.Has(analyze.ContentLatency) || !c.Has(analyze.ContentBreakdown) {
			return fail.Inputf(name, "profile has only %s; compare needs latency and breakdown", strings.Join(c, ","))
		}
	}
	c := analyze.Compare(profs[0], profs[1], files[0], files[1])
	if len(c.Groups) == 0 {
		return fail.Inputf(files[1], "no group in common with %s (%s)", files[0], strings.Join(c.Unmatched, "; "))
	}
	if *htmlOut != "" {
		if err := atomicfile.Write(*htmlOut, func(w io.Writer) error { return report.HTML(w, profs[1], c) }); err != nil {
			return err
		}
	}
	err = out.write(stdout, func(w io.Writer) error {
		if out.json {
			return report.JSON(w, c)
		}
		return report.CompareText(w, c)
	})
	if err != nil {
		return err
	}
	if *failAbove > 0 {
		for _, g := range c.Groups {
			if g.LAD > *failAbove {
				return fail.Requirementf("profile compare: group %s has LAD %.2f above %.2f (%s)", g.Key, g.LAD, *failAbove, g.Verdict)
			}
		}
	}
	return nil
}

func runProfilePaths(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("profile paths", "profile paths [--json] [NAME]", stderr)
	out := addOutputFlags(fs, "profile/path/format.md")
	names, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		type entry struct {
			Name        string   `json:"name"`
			Description string   `json:"description"`
			Stages      []string `json:"stages"`
		}
		var list []entry
		for _, n := range path.Names() {
			p, err := path.Builtin(n)
			if err != nil {
				return err
			}
			e := entry{Name: n, Description: p.Description, Stages: []string{}}
			for _, s := range p.Stages {
				e.Stages = append(e.Stages, s.Name)
			}
			list = append(list, e)
		}
		return out.write(stdout, func(w io.Writer) error {
			if out.json {
				return writeJSON(w, struct {
					Schema string  `json:"schema"`
					Paths  []entry `json:"paths"`
				}{"dpperf.profile.paths/v1", list})
			}
			for _, e := range list {
				fmt.Fprintf(w, "%-10s %s\n           stages: %s\n", e.Name, e.Description, strings.Join(e.Stages, " "))
			}
			return nil
		})
	}
	data, err := path.Source(names[0])
	if err != nil {
		return fail.Usagef("%v", err)
	}
	return out.write(stdout, func(w io.Writer) error {
		if out.json {
			return yamlAsJSON(w, data)
		}
		_, err := w.Write(data)
		return err
	})
}

func runProfileRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("profile run", "profile run [flags] [-- COMMAND ARGS...]", stderr)
	var tf taskFlags
	var out profileOutput
	tf.register(fs)
	out.register(fs)
	collector := fs.String("collector", "auto", "bpf, tracefs, or auto (bpf when it has programs for every event of the path)")
	duration := fs.Duration("duration", 0, "stop after this long (default: task duration, else when COMMAND exits or on Ctrl-C)")
	bufKB := fs.Int("buffer-kb", 0, "kernel buffer size in KiB (ring buffer; per CPU for tracefs)")
	listen := fs.String("listen", "", "serve Prometheus metrics on this address (e.g. :9464)")
	progs := fs.String("bpf-programs", "auto", "BPF program type: auto (tp_btf when the kernel has BTF), tp_btf, tracepoint, or empty (programs that return at once: what attaching costs; no records)")
	bpfStats := fs.Bool("bpf-stats", false, "measure the kernel-side run time of the BPF programs")
	alt := fs.Duration("alternate", 0, "overhead measurement: detach and attach the collector every `PERIOD` (bpf collector); windows go to -alternate-log")
	altLog := fs.String("alternate-log", "", "file for the windows of -alternate: lines \"on|off START END\" in Unix ns")
	// Everything after "--" is the command to profile, flags included.
	var cmdArgs []string
	for i, a := range args {
		if a == "--" {
			args, cmdArgs = args[:i], args[i+1:]
			break
		}
	}
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := out.checkOldJSON(fs, rest); err != nil {
		return err
	}
	if len(rest) > 0 {
		return fail.Usagef("profile run: unexpected argument %q (put the command after --)", rest[0])
	}
	tk, p, err := tf.load()
	if err != nil {
		return err
	}
	dev, err := collect.ResolveDev(tk.Workload.Device)
	if err != nil {
		return fail.Input(tf.task, err)
	}
	cfg := collect.Config{Path: p, Dev: dev, Sample: tk.Profiling.Sample, BufferKB: *bufKB, Programs: *progs, Stats: *bpfStats}
	cfg.Op, cfg.HasOp = tk.Workload.Op()
	lo, hi := tk.Workload.SizeRange()
	cfg.MinBytes, cfg.MaxBytes = uint32(lo), uint32(hi)
	kind := *collector
	if kind == "auto" {
		kind = "tracefs"
		if collect.BPFHandles(p) {
			kind = "bpf"
		}
	}
	switch {
	case *alt > 0 && *altLog == "":
		return fail.Usagef("-alternate needs -alternate-log FILE for its windows")
	case *alt > 0 && kind != "bpf":
		return fail.Usagef("-alternate needs the bpf collector (this run uses %s)", kind)
	}
	// The task's time window: wait for its start, stop at its end.
	start, end := tk.Profiling.Window()
	if !end.IsZero() && time.Now().After(end) {
		return fail.Inputf(tf.task, "profiling.end %s is in the past", tk.Profiling.End)
	}
	if wait := time.Until(start); wait > 0 {
		fmt.Fprintf(stderr, "profile: waiting %v for the window to start\n", wait.Round(time.Second))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var col interface {
		collect.Collector
		Stop()
	}
	switch kind {
	case "bpf":
		col, err = collect.OpenBPF(cfg)
	case "tracefs":
		col, err = collect.OpenTraceFS(cfg)
	default:
		return fail.Usagef("-collector: %q (want bpf, tracefs or auto)", kind)
	}
	if errors.Is(err, collect.ErrNotRoot) {
		return fail.NeedsRootf("profile run: %v", err)
	}
	if err != nil {
		return fmt.Errorf("profile run: %w", err)
	}
	defer col.Close()
	for _, st := range col.Status() {
		if !st.Attached {
			fmt.Fprintf(stderr, "profile: %s (%s) not observed: %s\n", st.Name, st.Probe, st.Reason)
		}
	}
	opt := analyze.OptionsFor(tk, p, dev)
	if kind == "bpf" {
		opt.Filter.Sample = 1 // sampled in the kernel
	}
	var live *report.Metrics
	if *listen != "" {
		live = report.NewMetrics(p, opt.GroupBy)
		live.Contents = tk.Report.Contents
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return fail.Usagef("-listen: %v", err)
		}
		srv := &http.Server{Handler: live, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		fmt.Fprintf(stderr, "profile: metrics on http://%s/metrics\n", ln.Addr())
	}
	online := tk.Profiling.Mode == "online"
	opt.Interval = time.Duration(tk.Profiling.Interval)
	var total int64
	opt.OnInterval = func(a *analyze.Aggregator) {
		total += a.Records()
		if live != nil {
			live.Add(a)
		}
		if online {
			ip := analyze.Summarize(a, p, tk.Profiling.Sample)
			ip.Source = "interval"
			ip.Restrict(tk.Report.Contents)
			_ = report.Text(stdout, ip, report.Columns{"avg", "p50", "p99", "max"})
		} else if !out.quiet {
			fmt.Fprintf(stderr, "profile: %d requests so far, %d events lost\n", total, col.Lost())
		}
	}
	// Stop collecting on Ctrl-C, at the deadline, or when the command ends;
	// the analyzer then drains what the kernel buffered.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d := time.Duration(tk.Profiling.Duration); *duration == 0 && d > 0 {
		*duration = d
	}
	if *duration > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, *duration)
		defer cancel()
	}
	if !end.IsZero() {
		runCtx, cancel = context.WithDeadline(runCtx, end)
		defer cancel()
	}
	var cmdErr error
	cmdDone := make(chan struct{})
	if len(cmdArgs) > 0 {
		cmd := exec.CommandContext(runCtx, cmdArgs[0], cmdArgs[1:]...)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Start(); err != nil {
			return fail.Usagef("profile run: start %s: %v", cmdArgs[0], err)
		}
		go func() {
			cmdErr = cmd.Wait()
			close(cmdDone)
			cancel()
		}()
	} else {
		close(cmdDone)
	}
	go func() {
		<-runCtx.Done()
		col.Stop()
	}()
	spill, finishSpill, err := openSpill(tk, p, stderr)
	if err != nil {
		return err
	}
	opt.Spill = spill
	var altDone <-chan error
	if pc, ok := col.(pausable); ok && *alt > 0 {
		if altDone, err = alternate(runCtx, pc, *alt, *altLog); err != nil {
			return fail.Usagef("-alternate-log: %v", err)
		}
	}
	agg, stats, err := analyze.Run(context.Background(), col, opt)
	<-cmdDone
	if err != nil {
		return fmt.Errorf("profile run: %w", err)
	}
	if altDone != nil {
		if err := <-altDone; err != nil {
			return fmt.Errorf("profile run: -alternate: %w", err)
		}
	}
	if err := finishSpill(); err != nil {
		return err
	}
	prof := analyze.Summarize(agg, p, tk.Profiling.Sample)
	prof.Source = kind
	if b, ok := col.(*collect.BPF); ok {
		prof.Source += " (" + b.Programs() + ")"
		if k := collectorCost(b.Cost()); *bpfStats && k.Runs > 0 {
			total := time.Duration(k.TotalNS)
			if stats.Records > 0 {
				k.NSPerReq = float64(total.Nanoseconds()) / float64(stats.Records)
			}
			if prof.Window.Seconds > 0 {
				k.CPUPercent = 100 * total.Seconds() / prof.Window.Seconds
			}
			prof.Collector = k
		}
	}
	prof.Filter = analyze.FilterText(tk, dev)
	prof.GroupBy = tk.Report.GroupBy
	prof.Counts = analyze.Counts{BuildStats: stats, Lost: col.Lost(), Analyzed: agg.Records()}
	if b, ok := col.(*collect.BPF); ok {
		prof.Counts.Restarted += b.Overwritten()
	}
	for _, st := range col.Status() {
		prof.Events = append(prof.Events, analyze.EventInfo{Name: st.Name, Probe: st.Probe, Observed: st.Attached, Reason: st.Reason})
	}
	prof.SetEventCounts()
	if prof.Counts.Lost > 0 {
		prof.Warnings = append(prof.Warnings, fmt.Sprintf("the kernel lost %d events; some requests are missing", prof.Counts.Lost))
	}
	if b, ok := col.(*collect.BPF); ok {
		if w, per, share := b.Duty(); per > 0 {
			prof.Warnings = append(prof.Warnings, fmt.Sprintf("sampled in windows: the programs were attached for %v of every %v (and until the requests started in it finished) and kept %.3g%% of the requests in them", w, per, 100*share))
		}
		if b.Programs() == "tp_btf, empty" {
			prof.Warnings = append(prof.Warnings, "empty programs (--bpf-programs empty): attached to measure what attaching costs; nothing was recorded")
		}
	}
	if *alt > 0 {
		prof.Warnings = append(prof.Warnings, fmt.Sprintf("the collector was detached every other %v (-alternate): requests, throughput and queue occupancy cover about half the run", *alt))
	}
	if ctx.Err() != nil {
		prof.Warnings = append(prof.Warnings, "interrupted: partial profile")
	}
	if cmdErr != nil && ctx.Err() == nil {
		prof.Warnings = append(prof.Warnings, "command failed: "+cmdErr.Error())
	}
	if err := emit(prof, tk, &out, stdout); err != nil {
		return err
	}
	if cmdErr != nil && ctx.Err() == nil {
		return fmt.Errorf("profile run: %s: %w", cmdArgs[0], cmdErr)
	}
	return nil
}

// collectorCost sums the programs' kernel run time.
func collectorCost(progs []collect.ProgramCost) *analyze.CollectorCost {
	k := &analyze.CollectorCost{}
	for _, p := range progs {
		k.Runs += p.Runs
		k.TotalNS += p.Runtime.Nanoseconds()
		pc := analyze.ProgramCost{Name: p.Name, Runs: p.Runs}
		if p.Runs > 0 {
			pc.NSPerRun = float64(p.Runtime.Nanoseconds()) / float64(p.Runs)
		}
		k.Programs = append(k.Programs, pc)
	}
	if k.Runs > 0 {
		k.NSPerRun = float64(k.TotalNS) / float64(k.Runs)
	}
	return k
}
