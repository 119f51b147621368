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
	// Over the programs whose replays follow the bound's path.
	Compared    int     `json:"compared"`
	Violations  int     `json:"violations"`   // median replay below the bound
	MedianRatio float64 `json:"median_ratio"` // median of bound / median replay
}

// Row is one program's bound and replays.
type Row struct {
	Program    string    `json:"program"`
	Object     string    `json:"object"`
	TargetName string    `json:"target_name"`
	Basis      string    `json:"basis"`
	Kind       string    `json:"kind"`         // ssp, intermediate
	Bound      float64   `json:"bound_pps"`    // packets/s
	Measured   []float64 `json:"measured_pps"` // one per replay (each the median of its timings)
	Median     float64   `json:"median_pps"`
	Min        float64   `json:"min_pps"`
	Ratio      float64   `json:"ratio"` // bound / median replay
	Below      int       `json:"replays_below_bound"`
	// Status: "held", "VIOLATED", or why the replays are not compared:
	// "intermediate" (no example), "not replayable", "path differs",
	// "stateful" (repeats take another path).
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

// add takes one bound --measure result.
func (row *Row) add(r *bound.Result) {
	row.TargetName, row.Basis, row.Kind, row.Bound = r.Target.Name, r.Basis, r.Kind, r.Bound.PacketRate
	if r.Kind != "ssp" || len(r.Paths) == 0 || r.Paths[0].Measured == nil {
		row.Status = "intermediate"
		return
	}
	m := r.Paths[0].Measured
	switch {
	case strings.Contains(m.Mismatch, "cannot be filled"):
		row.Status, row.Note = "not replayable", m.Mismatch
	case !m.VerdictMatches || !m.PathMatches:
		row.Status, row.Note = "path differs", m.Mismatch
	case m.Stateful:
		row.Status, row.Note = "stateful", "repeats of the example take another path; the rate is theirs"
	}
	row.Measured = append(row.Measured, m.PacketRate)
}

func (rep *Report) summarize() {
	var ratios []float64
	for _, row := range rep.Rows {
		if len(row.Measured) == 0 {
			continue
		}
		ms := slices.Clone(row.Measured)
		slices.Sort(ms)
		row.Median = stat.Quantile(0.5, stat.Empirical, ms, nil)
		row.Min = ms[0]
		row.Ratio = row.Bound / row.Median
		row.Below = 0
		for _, m := range ms {
			if m < row.Bound {
				row.Below++
			}
		}
		if row.Status != "" {
			continue
		}
		rep.Compared++
		ratios = append(ratios, row.Ratio)
		row.Status = "held"
		if row.Median < row.Bound {
			row.Status = "VIOLATED"
			rep.Violations++
		}
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		rep.MedianRatio = stat.Quantile(0.5, stat.Empirical, ratios, nil)
	}
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
		"interleaved across programs; each replay is the median of five timings. A guarantee is violated when the median replay runs below the bound.\n\n", rep.Reps)
	fmt.Fprintln(w, "| program | bound (Mpkt/s) | replays min / median (Mpkt/s) | bound / median | replays below bound | status |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rep.Rows {
		ratio, meas := "–", "–"
		if len(r.Measured) > 0 {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
			meas = fmt.Sprintf("%.2f / %.2f", r.Min/1e6, r.Median/1e6)
		}
		status := r.Status
		if r.Note != "" {
			status += ": " + r.Note
		}
		fmt.Fprintf(w, "| %s | %.2f | %s | %s | %d of %d | %s |\n", r.Program, r.Bound/1e6, meas, ratio, r.Below, len(r.Measured), status)
	}
	fmt.Fprintf(w, "\n%d programs compared: %d violations; median bound / measured %.2f.\n", rep.Compared, rep.Violations, rep.MedianRatio)
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
