package profiling

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/collect"
	"github.com/dpperf/dpperf/profile/report"
)

// The BPF collector hands whole requests to the analyzer.
var _ analyze.RecordSource = (*collect.BPF)(nil)

// Live is one profiling run on the running kernel (root): it attaches a
// collector within the task's time window, runs the command if there is
// one, and stops at the end of the command, of the duration or of the
// window, or when ctx ends (Ctrl-C), after draining what the kernel
// buffered.
type Live struct {
	*Setup
	Collector collect.Kind
	Programs  string        // BPF programs: auto, tp_btf, tracepoint or empty (collect.Config)
	BufferKB  int           // kernel buffer size; 0: the collector's default
	Stats     bool          // measure the BPF programs' own kernel run time
	Duration  time.Duration // 0: the task's duration, else until the command ends
	Listen    string        // serve Prometheus metrics on this address; "": none
	// Alternate, when set, detaches and attaches the collector every
	// Alternate (BPF only), logging the windows to AlternateLog.
	Alternate    time.Duration
	AlternateLog string
	Command      []string  // the command to profile, with its arguments; none: until stopped
	Notes        io.Writer // the run's notes and the command's output
	Quiet        bool      // no progress notes
	// OnInterval, for an online task, gets the profile of each interval.
	OnInterval func(*analyze.Profile)
	// Hosts, when Serve or Peer is set, makes this one of a two-host run
	// (see runHosts).
	Hosts Hosts
}

// Result is the outcome of a Live run.
type Result struct {
	Profile *analyze.Profile
	// CommandErr is the command's failure; the profile warns of it too.
	CommandErr error
	// Interrupted is set when a signal cut the profiled command short: the
	// profile is partial (a run without a command ends on a signal by
	// design and is not interrupted).
	Interrupted bool
}

// StopGrace is how long the run may still take after Ctrl-C: detaching
// its probes and removing its tracefs instance (seconds on an emulated
// guest), and on an initiator of two hosts the target's last records,
// fetched until the target has nothing new (at most 30 s, each request
// within the client's 5 s).
func (l *Live) StopGrace() time.Duration {
	if l.Hosts.Peer != "" {
		return 45 * time.Second
	}
	return 10 * time.Second
}

// Run collects and analyzes until the run ends, and returns the profile.
func (l *Live) Run(ctx context.Context) (*Result, error) {
	res, err := l.run(ctx)
	if res != nil {
		res.Interrupted = ctx.Err() != nil && len(l.Command) > 0
	}
	return res, err
}

func (l *Live) run(ctx context.Context) (*Result, error) {
	if l.Hosts.Serve != "" || l.Hosts.Peer != "" {
		return l.runHosts(ctx)
	}
	kind := l.Collector.For(l.Path)
	switch {
	case l.Alternate > 0 && l.AlternateLog == "":
		return nil, fail.Usagef("-alternate needs -alternate-log FILE for its windows")
	case l.Alternate > 0 && kind != collect.KindBPF:
		return nil, fail.Usagef("-alternate needs the bpf collector (this run uses %s)", kind)
	}
	end, err := l.waitForWindow(ctx)
	if err != nil {
		return nil, err
	}
	col, err := collect.Open(kind, l.config())
	if errors.Is(err, collect.ErrNotRoot) {
		return nil, fail.NeedsRootf("profile run: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("profile run: %w", err)
	}
	defer col.Close()
	for _, st := range col.Status() {
		if !st.Attached {
			fmt.Fprintf(l.Notes, "profile: %s (%s) not observed: %s\n", st.Name, st.Probe, st.Reason)
		}
	}
	opt := analyze.OptionsFor(l.Task, l.Path, l.Dev)
	if kind == collect.KindBPF {
		opt.Filter.Sample = 1 // sampled in the kernel
	}
	live, stopServer, err := l.serveMetrics(opt.GroupBy)
	if err != nil {
		return nil, err
	}
	defer stopServer()
	opt.Interval = time.Duration(l.Task.Profiling.Interval)
	opt.OnInterval = l.onInterval(col, live)
	runCtx, cancel, cmd, err := l.start(ctx, end, col)
	defer cancel()
	if err != nil {
		return nil, err
	}
	spill, finishSpill, err := l.openSpill(l.Notes)
	if err != nil {
		return nil, err
	}
	opt.Spill = spill
	var altDone <-chan error
	if pc, ok := col.(pausable); ok && l.Alternate > 0 {
		if altDone, err = alternate(runCtx, pc, l.Alternate, l.AlternateLog); err != nil {
			return nil, fail.Usagef("-alternate-log: %v", err)
		}
	}
	agg, stats, err := analyze.Run(context.Background(), col, opt)
	cmdErr := cmd.wait()
	if err != nil {
		return nil, fmt.Errorf("profile run: %w", err)
	}
	if altDone != nil {
		if err := <-altDone; err != nil {
			return nil, fmt.Errorf("profile run: -alternate: %w", err)
		}
	}
	if err := finishSpill(); err != nil {
		return nil, err
	}
	prof := l.summarize(agg, kind.String())
	prof.Counts = analyze.Counts{BuildStats: stats, Lost: col.Lost(), Analyzed: agg.Records()}
	for _, st := range col.Status() {
		prof.Events = append(prof.Events, analyze.EventInfo{Name: st.Name, Probe: st.Probe, Observed: st.Attached, Reason: st.Reason})
	}
	if b, ok := col.(*collect.BPF); ok {
		l.describeBPF(prof, b, stats)
	}
	prof.SetEventCounts()
	if prof.Counts.Lost > 0 {
		prof.Warnings = append(prof.Warnings, fmt.Sprintf("the kernel lost %d events; some requests are missing", prof.Counts.Lost))
	}
	if b, ok := col.(*collect.BPF); ok {
		prof.Warnings = append(prof.Warnings, bpfWarnings(b)...)
	}
	if l.Alternate > 0 {
		prof.Warnings = append(prof.Warnings, fmt.Sprintf("the collector was detached every other %v (-alternate): requests, throughput and queue occupancy cover about half the run", l.Alternate))
	}
	if ctx.Err() != nil {
		prof.Warnings = append(prof.Warnings, "interrupted: partial profile")
	}
	res := &Result{Profile: prof}
	if cmdErr != nil && ctx.Err() == nil {
		prof.Warnings = append(prof.Warnings, "command failed: "+cmdErr.Error())
		res.CommandErr = cmdErr
	}
	return res, nil
}

// config is what the collector is to collect.
func (l *Live) config() collect.Config {
	cfg := collect.Config{Path: l.Path, Dev: l.Dev, Sample: l.Task.Profiling.Sample, BufferKB: l.BufferKB, Programs: l.Programs, Stats: l.Stats}
	cfg.Op, cfg.HasOp = l.Task.Workload.Op()
	lo, hi := l.Task.Workload.SizeRange()
	cfg.MinBytes, cfg.MaxBytes = uint32(lo), uint32(hi)
	return cfg
}

// waitForWindow waits for the start of the task's time window and
// returns its end (zero: none).
func (l *Live) waitForWindow(ctx context.Context) (time.Time, error) {
	start, end := l.Task.Profiling.Window()
	if !end.IsZero() && time.Now().After(end) {
		return end, fail.Inputf(l.File, "profiling.end %s is in the past", l.Task.Profiling.End)
	}
	if wait := time.Until(start); wait > 0 {
		fmt.Fprintf(l.Notes, "profile: waiting %v for the window to start\n", wait.Round(time.Second))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return end, ctx.Err()
		}
	}
	return end, nil
}

// start starts the run: its context (see runContext), the command, and
// the collector's stop when the context ends. Call cancel in any case.
func (l *Live) start(ctx context.Context, end time.Time, col collect.Collector) (context.Context, context.CancelFunc, *command, error) {
	runCtx, cancel := l.runContext(ctx, end)
	cmd, err := startCommand(runCtx, cancel, l.Command, l.Notes)
	if err != nil {
		return runCtx, cancel, nil, err
	}
	go func() {
		<-runCtx.Done()
		col.Stop()
	}()
	return runCtx, cancel, cmd, nil
}

// runContext ends at the run's duration (Duration, else the task's) and
// at the window's end; the command's end cancels it too.
func (l *Live) runContext(ctx context.Context, end time.Time) (context.Context, context.CancelFunc) {
	runCtx, cancel := context.WithCancel(ctx)
	cancels := []context.CancelFunc{cancel}
	d := l.Duration
	if td := time.Duration(l.Task.Profiling.Duration); d == 0 && td > 0 {
		d = td
	}
	if d > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, d)
		cancels = append(cancels, cancel)
	}
	if !end.IsZero() {
		runCtx, cancel = context.WithDeadline(runCtx, end)
		cancels = append(cancels, cancel)
	}
	return runCtx, func() {
		for _, c := range cancels {
			c()
		}
	}
}

// serveMetrics serves Prometheus metrics on l.Listen, if set: the
// returned metrics get each interval's records; stop ends the server.
func (l *Live) serveMetrics(by analyze.GroupBy) (live *report.Metrics, stop func(), err error) {
	if l.Listen == "" {
		return nil, func() {}, nil
	}
	live = report.NewMetrics(l.Path, by)
	live.Contents = l.Task.Report.Contents
	live.Sample = l.Task.Profiling.Sample
	ln, err := net.Listen("tcp", l.Listen)
	if err != nil {
		return nil, nil, fail.Usagef("-listen: %v", err)
	}
	srv := &http.Server{Handler: live, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(l.Notes, "profile: metrics on http://%s/metrics\n", ln.Addr())
	return live, func() { srv.Close() }, nil
}

// onInterval passes each interval's records to the metrics and, for an
// online task, its profile to OnInterval; otherwise it notes the progress.
func (l *Live) onInterval(col collect.Collector, live *report.Metrics) func(*analyze.Aggregator) {
	var total int64
	return func(a *analyze.Aggregator) {
		total += a.Records()
		if live != nil {
			live.Add(a)
		}
		if l.online() {
			if l.OnInterval != nil {
				l.OnInterval(l.interval(a))
			}
		} else if !l.Quiet {
			fmt.Fprintf(l.Notes, "profile: %d requests so far, %d events lost\n", total, col.Lost())
		}
	}
}
