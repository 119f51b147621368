package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/dpperf/dpperf/bound"
)

// Report is the evidence of one run (written as JSON as is).
type Report struct {
	Date    string  `json:"date"`
	Target  string  `json:"target"` // as given to --target
	Reps    int     `json:"reps"`
	Machine Machine `json:"machine"`
	Rows    []*Row  `json:"programs"`
	// Over the programs with at least one path checked.
	Compared    int     `json:"compared"`
	Violations  int     `json:"violations"`   // programs with a path whose median replay ran below its prediction
	MedianRatio float64 `json:"median_ratio"` // median over programs of guarantee / measured on the first path checked
	// The same against each path's slowest replay: a guarantee is a worst
	// case, and on a host that runs in two speeds the median replay may
	// be a fast one.
	MedianSlowestRatio float64 `json:"median_slowest_ratio"`
	// The same against each path's replays carried to the calibration's
	// slow speed by the speed probe timed around them: the guarantee's
	// tightness at the speed it is priced for (calibrations with a probe).
	MedianSlowStateRatio float64 `json:"median_slow_state_ratio,omitempty"`
	// Programs with a path whose median replay at the slow speed ran
	// below its prediction: the guarantee fails in the core's slow state.
	SlowStateBelow int `json:"slow_state_below"`
	// ReplaySpeed is the median over every replay of measured / carried
	// to the slow speed: how much faster than the slow state, which the
	// guarantee is priced for, the core ran the replays. A guarantee is
	// at most 1/ReplaySpeed of a replay at that speed (calibrations with
	// a probe).
	ReplaySpeed float64 `json:"median_replay_speed,omitempty"`
	// Over the same paths at the calibration's medians (calibrated targets).
	MedianExpectedRatio float64 `json:"median_expected_ratio,omitempty"`
	// Pricing says what the target's guarantee takes over a typical run
	// (the calibration's percentile, the slow state, the fit's margin).
	Pricing string `json:"pricing,omitempty"`
}

// Row is one program's bound and the paths its replays ran.
type Row struct {
	Program    string     `json:"program"`
	Object     string     `json:"object"`
	TargetName string     `json:"target_name"`
	Basis      string     `json:"basis"`
	Kind       string     `json:"kind"`      // ssp, intermediate
	Bound      float64    `json:"bound_pps"` // packets/s
	Expected   float64    `json:"expected_pps,omitempty"`
	Paths      []*PathRow `json:"paths"`
	// Status: "held", "VIOLATED", or why nothing is compared:
	// "intermediate" (no example), "unchecked".
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
	// Dominant is the bound path's dearest source line with its share
	// of the path's cost, reported where a path runs at more than twice
	// its predicted rate.
	Dominant string `json:"dominant,omitempty"`
}

// PathRow is one path the replays of a program ran, with its own
// predicted rate and the replays' measured rates.
type PathRow struct {
	Path      string    `json:"path"` // example, as run, repeats
	How       string    `json:"how"`  // repeated, new flows, single runs
	Predicted float64   `json:"predicted_pps"`
	Expected  float64   `json:"expected_pps,omitempty"`
	Measured  []float64 `json:"measured_pps"` // one per replay
	// AtSlow is each replay carried to the calibration's slow speed (empty
	// without a speed probe), SlowState their median.
	AtSlow         []float64 `json:"slow_state_pps,omitempty"`
	SlowState      float64   `json:"slow_state_median_pps,omitempty"`
	SlowStateRatio float64   `json:"slow_state_ratio,omitempty"` // predicted / SlowState
	Median         float64   `json:"median_pps"`
	Min            float64   `json:"min_pps"`
	Ratio          float64   `json:"ratio"`                    // predicted / median replay
	SlowRatio      float64   `json:"slowest_ratio"`            // predicted / slowest replay
	ExpRatio       float64   `json:"expected_ratio,omitempty"` // expected / median replay
	Below          int       `json:"replays_below"`
	Held           bool      `json:"held"` // median replay at or above the prediction
}

// add takes one bound --measure result.
func (row *Row) add(r *bound.Result) {
	row.TargetName, row.Basis, row.Kind, row.Bound = r.Target.Name, r.Basis, r.Kind, r.Bound.PacketRate
	if r.Expected != nil {
		row.Expected = r.Expected.PacketRate
	}
	if r.Kind != "ssp" || len(r.Paths) == 0 || r.Paths[0].Measured == nil {
		row.Status = "intermediate"
		return
	}
	m := r.Paths[0].Measured
	var notes []string
	if m.Mismatch != "" {
		notes = append(notes, m.Mismatch)
	}
	if m.Unchecked != "" {
		notes = append(notes, m.Unchecked)
	}
	row.Note = strings.Join(notes, "; ")
	row.Dominant = dominant(r.Paths[0].Lines)
	for _, c := range m.Checks {
		pr := row.path(c.Path, c.How)
		pr.Predicted, pr.Expected = c.Predicted, c.Expected
		pr.Measured = append(pr.Measured, c.Measured)
		if c.AtSlowSpeed > 0 {
			pr.AtSlow = append(pr.AtSlow, c.AtSlowSpeed)
		}
	}
}

// dominant names the line with the largest share of a path's cost.
func dominant(lines []bound.SourceLine) string {
	var top *bound.SourceLine
	for i := range lines {
		if top == nil || lines[i].Share > top.Share {
			top = &lines[i]
		}
	}
	if top == nil {
		return ""
	}
	text := strings.TrimSpace(top.Text)
	if text == "" {
		text = "no source text"
	}
	if top.Loc == "-" {
		return fmt.Sprintf("%s, %.0f%% of the path's cost", strings.Trim(text, "()"), 100*top.Share)
	}
	return fmt.Sprintf("%s (%s), %.0f%% of the path's cost", top.Loc, text, 100*top.Share)
}

// path is the row's entry for path and how, added when new.
func (row *Row) path(path, how string) *PathRow {
	for _, p := range row.Paths {
		if p.Path == path && p.How == how {
			return p
		}
	}
	p := &PathRow{Path: path, How: how}
	row.Paths = append(row.Paths, p)
	return p
}

func (rep *Report) summarize() {
	var ratios, slowRatios, expRatios, stateRatios, speeds []float64
	rep.Compared, rep.Violations, rep.SlowStateBelow = 0, 0, 0
	for _, row := range rep.Rows {
		for _, p := range row.Paths {
			ms := slices.Clone(p.Measured)
			slices.Sort(ms)
			p.Median = stat.Quantile(0.5, stat.Empirical, ms, nil)
			p.Min = ms[0]
			p.Ratio = p.Predicted / p.Median
			p.SlowRatio = p.Predicted / p.Min
			if p.Expected > 0 {
				p.ExpRatio = p.Expected / p.Median
			}
			p.Below = 0
			for _, m := range ms {
				if m < p.Predicted {
					p.Below++
				}
			}
			p.Held = p.Median >= p.Predicted
			if len(p.AtSlow) > 0 {
				p.SlowState = median(slices.Clone(p.AtSlow))
				p.SlowStateRatio = p.Predicted / p.SlowState
			}
			if len(p.AtSlow) == len(p.Measured) {
				for i, m := range p.Measured {
					if p.AtSlow[i] > 0 {
						speeds = append(speeds, m/p.AtSlow[i])
					}
				}
			}
		}
		if row.Status == "intermediate" {
			continue
		}
		if len(row.Paths) == 0 {
			row.Status = "unchecked"
			continue
		}
		rep.Compared++
		ratios = append(ratios, row.Paths[0].Ratio)
		slowRatios = append(slowRatios, row.Paths[0].SlowRatio)
		if row.Paths[0].ExpRatio > 0 {
			expRatios = append(expRatios, row.Paths[0].ExpRatio)
		}
		if row.Paths[0].SlowStateRatio > 0 {
			stateRatios = append(stateRatios, row.Paths[0].SlowStateRatio)
		}
		for _, p := range row.Paths {
			if p.SlowState > 0 && p.SlowState < p.Predicted {
				rep.SlowStateBelow++
				break
			}
		}
		row.Status = "held"
		for _, p := range row.Paths {
			if !p.Held {
				row.Status = "VIOLATED"
			}
		}
		if row.Status == "VIOLATED" {
			rep.Violations++
		}
	}
	rep.MedianRatio = median(ratios)
	rep.MedianSlowestRatio = median(slowRatios)
	rep.MedianExpectedRatio = median(expRatios)
	rep.MedianSlowStateRatio = median(stateRatios)
	rep.ReplaySpeed = median(speeds)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return stat.Quantile(0.5, stat.Empirical, xs, nil)
}

// base is the reports' file name without extension.
func (rep *Report) base() string {
	return rep.Date[:10] + "-bound-" + strings.ReplaceAll(filepath.Base(rep.Target), ".yaml", "")
}

func (rep *Report) writeFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, rep.base()+".json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, rep.base()+".md"))
	if err != nil {
		return err
	}
	werr := rep.writeMarkdown(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

func (rep *Report) writeMarkdown(w io.Writer) error {
	m := rep.Machine
	fmt.Fprintf(w, "# Bounds against BPF_PROG_TEST_RUN, %s\n\n", rep.Date[:10])
	fmt.Fprintf(w, "Machine: %s, %d CPUs, Linux %s, microcode %s; load average %s at the start, %s at the end.\n",
		m.CPU, m.CPUs, m.Kernel, m.Microcode, m.LoadStart, m.LoadEnd)
	if len(rep.Rows) > 0 {
		fmt.Fprintf(w, "Target: `--target %s` (%s, basis %s).\n", rep.Target, rep.Rows[0].TargetName, rep.Rows[0].Basis)
	}
	fmt.Fprintf(w, "Each program's bound (`dpperf bound --measure`, one core) and its example packet replayed %d times, "+
		"interleaved across programs. Every path a replay ran is held against its own predicted rate: the bound's path "+
		"(`example`, timed repeated; when the packet changes its state, on a stream of new flows in one run, or in single runs from "+
		"a restored state where no stream keeps the path), the path the "+
		"repeats of a stateful example settle on (`repeats`), or the path the packet takes instead (`as run`, when a map it needs "+
		"cannot be filled). Each timing is the median of five; a path is violated when its median replay runs below its prediction. "+
		"The calibration's speed probe, timed just before and after each timing on the same CPU, carries every timing to the speed of "+
		"the calibration's slow state, which the guarantee is priced for (`at slow speed`).\n\n", rep.Reps)
	fmt.Fprintln(w, "| program | bound (Mpkt/s) | path | predicted / expected (Mpkt/s) | replays min / median (Mpkt/s) | at slow speed (Mpkt/s) | predicted / median | predicted / slowest | predicted / at slow speed | expected / median | below | status |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rep.Rows {
		status := r.Status
		if r.Note != "" {
			status += ": " + r.Note
		}
		if len(r.Paths) == 0 {
			fmt.Fprintf(w, "| %s | %.2f | – | – | – | – | – | – | – | – | – | %s |\n", r.Program, r.Bound/1e6, status)
			continue
		}
		for i, p := range r.Paths {
			name, bnd, st := "", "", "held"
			if i == 0 {
				name, bnd = r.Program, fmt.Sprintf("%.2f", r.Bound/1e6)
			}
			if !p.Held {
				st = "VIOLATED"
			}
			if i == len(r.Paths)-1 && r.Note != "" {
				st += ": " + r.Note
			}
			exp, expRatio := "–", "–"
			if p.Expected > 0 {
				exp, expRatio = fmt.Sprintf("%.2f", p.Expected/1e6), fmt.Sprintf("%.2f", p.ExpRatio)
			}
			slow, slowRatio := "–", "–"
			if p.SlowState > 0 {
				slow, slowRatio = fmt.Sprintf("%.2f", p.SlowState/1e6), fmt.Sprintf("%.2f", p.SlowStateRatio)
			}
			fmt.Fprintf(w, "| %s | %s | %s (%s) | %.2f / %s | %.2f / %.2f | %s | %.2f | %.2f | %s | %s | %d of %d | %s |\n", name, bnd, p.Path, p.How,
				p.Predicted/1e6, exp, p.Min/1e6, p.Median/1e6, slow, p.Ratio, p.SlowRatio, slowRatio, expRatio, p.Below, len(p.Measured), st)
		}
	}
	fmt.Fprintf(w, "\n%d of %d programs compared: %d violations; median predicted / measured %.2f (against the slowest replay %.2f)",
		rep.Compared, len(rep.Rows), rep.Violations, rep.MedianRatio, rep.MedianSlowestRatio)
	if rep.MedianSlowStateRatio > 0 {
		fmt.Fprintf(w, ", at the calibration's slow speed %.2f", rep.MedianSlowStateRatio)
	}
	if rep.MedianExpectedRatio > 0 {
		fmt.Fprintf(w, ", expected / measured %.2f", rep.MedianExpectedRatio)
	}
	fmt.Fprintln(w, " (on each program's first path).")
	if rep.MedianSlowStateRatio > 0 {
		fmt.Fprintf(w, "Programs with a path below its prediction at the slow speed: %d.\n", rep.SlowStateBelow)
	}
	if rep.ReplaySpeed > 0 {
		fmt.Fprintf(w, "The replays ran at a median of ×%.2f the speed of the calibration's slow state (speed probe): "+
			"a guarantee priced for the slow state is at most %.2f of such a replay.\n", rep.ReplaySpeed, 1/rep.ReplaySpeed)
	}
	for _, r := range rep.Rows {
		if r.Status != "held" && r.Status != "VIOLATED" {
			fmt.Fprintf(w, "- %s not compared: %s %s\n", r.Program, r.Status, r.Note)
		}
		for _, p := range r.Paths {
			// Listed when below half of the median replay, or of it at
			// the slow speed: with the dearest line, and why the
			// guarantee sits below the expected rate.
			slow := p.SlowStateRatio > 0 && p.SlowStateRatio < 0.5
			if (p.Ratio >= 0.5 && !slow) || r.Dominant == "" {
				continue
			}
			fmt.Fprintf(w, "- %s, path %s: predicted / measured %.2f", r.Program, p.Path, p.Ratio)
			if p.SlowStateRatio > 0 {
				fmt.Fprintf(w, " (%.2f at the slow speed)", p.SlowStateRatio)
			}
			fmt.Fprintf(w, "; the bound's dearest line is %s", r.Dominant)
			if p.Expected > 0 && rep.Pricing != "" {
				fmt.Fprintf(w, "; the guarantee is %.2f of the expected rate: %s", p.Predicted/p.Expected, rep.Pricing)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// Machine describes where the evidence was taken.
type Machine struct {
	CPU       string `json:"cpu"`
	Microcode string `json:"microcode"`
	CPUs      int    `json:"cpus"`
	Kernel    string `json:"kernel"`
	LoadStart string `json:"loadavg_start"`
	LoadEnd   string `json:"loadavg_end"`
}

func thisMachine() Machine {
	m := Machine{CPU: cpuinfo("model name"), Microcode: cpuinfo("microcode"), CPUs: runtime.NumCPU(), LoadStart: loadavg()}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	return m
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuinfo(field string) string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == field {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
