package bound

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dpperf/dpperf/symex"
	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/units"
)

// WriteJSON writes r as indented JSON (schema in json.md).
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

var kindTitles = map[string]string{
	"naive":        "naive bound: the slowest path, whether or not any packet can take it",
	"ssp":          "guarantee: the slowest path that some packet can take (slowest satisfiable path)",
	"intermediate": "intermediate bound: the search was cut short; every slower path is impossible, faster ones are unchecked",
}

// WriteText writes r as an aligned report for people.
func (r *Result) WriteText(w io.Writer) error {
	p := r.Program
	fmt.Fprintf(w, "program  %s (%s, section %s, %s)\n", p.Name, p.File, p.Section, p.Type)
	fmt.Fprintf(w, "target   %s: %s\n", r.Target.Name, r.Target.Description)
	fmt.Fprintf(w, "graph    %d instructions in %d function(s) -> %d blocks, %d edges after inlining and unrolling\n",
		p.Instructions, p.Functions, r.Graph.Nodes, r.Graph.Edges)
	if r.TargetInstructions > 0 {
		fmt.Fprintf(w, "jit      %d target instructions for the whole program\n", r.TargetInstructions)
	}
	for _, l := range r.Graph.Loops {
		fmt.Fprintf(w, "loop     %s in %s (instruction %d): %d iterations (%s)\n", orDash(l.Line), l.Func, l.Insn, l.Trips, l.How)
	}
	switch r.Packets {
	case PacketsAny:
		fmt.Fprintf(w, "packets  any bytes (malformed headers included; --well-formed leaves them out)\n")
	case PacketsWellFormed:
		fmt.Fprintf(w, "packets  well-formed (%s)\n", symex.WellFormedSummary)
	}
	title := kindTitles[r.Kind]
	if r.Basis == target.BasisEstimated {
		fmt.Fprintf(w, "basis    estimated: the target's costs were not measured on the machine, so this is an estimate, not a guarantee (for one, use a calibrated target: --target host for this machine)\n")
		title = strings.Replace(title, "guarantee:", "estimate:", 1)
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	b := r.Bound
	fmt.Fprintf(tw, "  packet rate\t%s\n", units.PacketRate(b.PacketRate))
	fmt.Fprintf(tw, "  bit rate\t%s at %d B packets\n", units.BitRate(b.BitRate), b.PacketBytes)
	fmt.Fprintf(tw, "  bottleneck\t%s\n", b.Bottleneck)
	if e := r.Expected; e != nil {
		fmt.Fprintf(tw, "  expected\t%s, %s: the same path at typical costs (the calibration's medians, or a fit's median scales) rather than the slow end\n",
			units.PacketRate(e.PacketRate), units.BitRate(e.BitRate))
	}
	if n := r.Naive; n != nil {
		fmt.Fprintf(tw, "  naive bound\t%s, %s at %d B (slowest path %s)\n", units.PacketRate(n.PacketRate), units.BitRate(n.BitRate), n.PacketBytes, units.PacketRate(n.PathRate))
	}
	if s := r.Search; s != nil {
		larger, families := "", ""
		switch {
		case s.Larger > 0 && r.Metric == BitRate.String():
			larger = fmt.Sprintf(", %d possible only with longer packets", s.Larger)
		case s.Larger > 0:
			larger = fmt.Sprintf(", %d too fast by their exact cost", s.Larger)
		}
		if s.Families > 0 {
			families = fmt.Sprintf("; %d families of impossible paths left out", s.Families)
		}
		fmt.Fprintf(tw, "  search\tby %s: %d paths checked, %d impossible, %d unknown%s; %d refuted prefixes pruned%s; %d solver checks on %d worker(s) in %s\n",
			r.Metric, s.Checked, s.Refuted, s.Unknown, larger, s.Prefixes, families, s.Solver, s.Workers, seconds(s.Seconds))
	}
	var limits []string
	if r.Target.PacketRate > 0 {
		limits = append(limits, "packet rate "+units.PacketRate(r.Target.PacketRate))
	}
	if r.Target.LineRate > 0 {
		limits = append(limits, "line rate "+units.BitRate(r.Target.LineRate))
	}
	if len(limits) > 0 {
		fmt.Fprintf(tw, "  fixed limits\t%s\n", strings.Join(limits, ", "))
	}
	tw.Flush()

	fmt.Fprintln(w)
	header := "rank\tpacket rate\tbit rate\tbottleneck"
	for _, c := range r.Target.Components {
		header += fmt.Sprintf("\t%s (%s)", c.Name, c.Unit)
	}
	jit := r.TargetInstructions > 0
	if jit {
		header += "\tinstructions\ttarget instructions"
	} else {
		header += "\tinstructions"
	}
	fmt.Fprintln(tw, header)
	for _, pr := range r.Paths {
		row := fmt.Sprintf("%d\t%s\t%s\t%s", pr.Rank, units.PacketRate(pr.PacketRate), units.BitRate(pr.BitRate), pr.Bottleneck)
		for _, c := range r.Target.Components {
			row += fmt.Sprintf("\t%.6g", pr.Cost[c.Name])
		}
		row += fmt.Sprintf("\t%d", pr.Instructions)
		if jit {
			row += fmt.Sprintf("\t%d", pr.TargetInstructions)
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()

	for _, pr := range r.Paths {
		if pr.Rank == 1 {
			what := "slowest path"
			if r.Kind == "ssp" {
				what = "slowest satisfiable path"
			}
			fmt.Fprintf(w, "\n%s, as source lines:\n", what)
		} else {
			fmt.Fprintf(w, "\npath %d:\n", pr.Rank)
		}
		writeLookups(w, pr.Lookups, r.Target.Components)
		if ex := pr.Example; ex != nil {
			minimal := "the smallest that takes the path"
			if !ex.Minimal {
				minimal = "not proven the smallest (solver timeout)"
			}
			if ex.Approx {
				minimal = "approximate: its hash values were not solved for in time, it may leave the path where a hash is tested"
			}
			fmt.Fprintf(w, "  example packet: %d B, %s; the program returns %d\n", ex.Length, minimal, ex.Verdict)
			for _, l := range ex.Layers {
				fmt.Fprintf(w, "    %s\n", l)
			}
			fmt.Fprintf(w, "    %s\n", ex.Packet)
			for _, m := range ex.Maps {
				switch {
				case m.Absent:
					fmt.Fprintf(w, "  map %s: key %s absent\n", m.Map, m.Key)
				case m.Global:
					fmt.Fprintf(w, "  global %s = %s\n", m.Map, m.Value)
				default:
					fmt.Fprintf(w, "  map %s: key %s = %s\n", m.Map, m.Key, m.Value)
				}
			}
			if m := pr.Measured; m != nil {
				ok := func(b bool) string {
					if b {
						return "yes"
					}
					return "NO"
				}
				fmt.Fprintf(w, "  measured (BPF_PROG_TEST_RUN, median of %d timings of %d runs): %.1f ns/packet = %s on one core; verdict %d (matches: %s); predicted path taken: %s\n",
					m.Timings, m.Repeat, m.NsPerPacket, units.PacketRate(m.PacketRate), m.KernelVerdict, ok(m.VerdictMatches), ok(m.PathMatches))
				if m.Mismatch != "" {
					fmt.Fprintf(w, "    %s\n", m.Mismatch)
				}
				if m.Stateful {
					fmt.Fprintf(w, "    the packet changes the state so that its repeats take another path: the figure above is mostly theirs;\n")
					if m.StreamRuns > 0 {
						fmt.Fprintf(w, "    a stream of %d new flows (bytes %d-%d counted up from the example's) in one run, each from the state the ones before left: %.1f ns/packet\n",
							m.StreamRuns, m.StreamOffset, m.StreamOffset+1, m.StreamNs)
					} else {
						fmt.Fprintf(w, "    %d single runs, each from the example's state (the run's own changes undone): %.1f ns/packet\n", m.SingleRuns, m.SingleNs)
					}
				}
				for _, c := range m.Checks {
					verdict := "held"
					if !c.Held {
						verdict = "BELOW its predicted rate"
					}
					expected := ""
					if c.Expected > 0 {
						expected = ", expected " + units.PacketRate(c.Expected)
					}
					slow := ""
					if c.AtSlowSpeed > 0 {
						slow = fmt.Sprintf(" (%s at the calibration's slow speed)", units.PacketRate(c.AtSlowSpeed))
					}
					fmt.Fprintf(w, "    path %s (%s, %d instructions): predicted %s%s, measured %s%s: %s\n",
						c.Path, c.How, c.Instructions, units.PacketRate(c.Predicted), expected, units.PacketRate(c.Measured), slow, verdict)
				}
				if m.Unchecked != "" {
					fmt.Fprintf(w, "    %s\n", m.Unchecked)
				}
			}
		} else if pr.Status == "unknown" {
			fmt.Fprintln(w, "  the solver timed out on this path; it is taken as possible, which keeps the bound valid")
		}
		if len(pr.Lines) > 0 {
			head := "  line\tinsns"
			for _, c := range r.Target.Components {
				head += "\t" + c.Name
			}
			fmt.Fprintln(tw, head+"\tshare\tsource")
		}
		for _, l := range pr.Lines {
			row := fmt.Sprintf("  %s\t%d", l.Loc, l.Instructions)
			for _, c := range r.Target.Components {
				row += fmt.Sprintf("\t%.4g", l.Cost[c.Name])
			}
			fmt.Fprintf(tw, "%s\t%.1f%%\t%s\n", row, 100*l.Share, l.Text)
		}
		if len(pr.Lines) == 0 {
			fmt.Fprintln(tw, "  (the object has no line information)")
		}
		tw.Flush()
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	return nil
}

// seconds formats a duration in seconds for people.
func seconds(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.0f µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.2f s", s)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
