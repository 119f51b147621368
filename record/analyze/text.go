package analyze

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

func dur(ns uint64) string   { return time.Duration(ns).String() }
func durf(ns float64) string { return time.Duration(ns).Round(time.Nanosecond).String() }

// WriteText writes the report as aligned tables. With histograms set it
// adds the duration histogram of every checkpoint and RPC.
func WriteText(w io.Writer, r *Report, histograms bool) error {
	var events, discarded uint64
	for _, s := range r.Streams {
		for _, n := range s.Events {
			events += n
		}
		discarded += s.Discarded
	}
	fmt.Fprintf(w, "recording %s: %d streams, %d events, %d discarded\n", r.Dir, len(r.Streams), events, discarded)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	if len(r.Checkpoints) > 0 {
		fmt.Fprintln(tw, "\ncheckpoint durations (START to END)")
		row("component", "checkpoint", "count", "mean", "p50", "p90", "p99", "max", "total", "unpaired")
		for _, d := range r.Checkpoints {
			row(d.Label, d.Name, fmt.Sprint(d.Count), durf(d.Mean), dur(d.P50), dur(d.P90), dur(d.P99), dur(d.Max), dur(d.Total), fmt.Sprint(d.Unpaired))
		}
	}
	if len(r.RPCs) > 0 {
		fmt.Fprintln(tw, "\nRPC round trips (call to return)")
		row("caller", "callee", "rpc", "count", "mean", "p50", "p90", "p99", "max", "total")
		for _, d := range r.RPCs {
			row(d.Caller, d.Callee, d.Name, fmt.Sprint(d.Count), durf(d.Mean), dur(d.P50), dur(d.P90), dur(d.P99), dur(d.Max), dur(d.Total))
		}
	}
	if len(r.Threads) > 0 {
		fmt.Fprintln(tw, "\nthread states (time in each)")
		row("component", "thread", StateReady, StateAwaitingReply, StateAwaitingRPC, "intervals")
		for _, t := range r.Threads {
			row(t.Label, t.Thread, dur(t.TimeNs[StateReady]), dur(t.TimeNs[StateAwaitingReply]), dur(t.TimeNs[StateAwaitingRPC]), fmt.Sprint(len(t.Intervals)))
		}
	}
	if len(r.Queues) > 0 {
		fmt.Fprintln(tw, "\nqueue fill (used slots per sample)")
		row("component", "queue", "capacity", "samples", "mean", "min", "max", "empty", "full")
		for _, q := range r.Queues {
			row(q.Label, q.Name, fmt.Sprint(q.Capacity), fmt.Sprint(q.Samples), fmt.Sprintf("%.1f", q.Mean), fmt.Sprint(q.Min), fmt.Sprint(q.Max),
				fmt.Sprintf("%.1f%%", 100*q.Empty), fmt.Sprintf("%.1f%%", 100*q.Full))
		}
	}
	fmt.Fprintln(tw, "\nstreams")
	row("stream", "packets", "discarded", "events")
	for _, s := range r.Streams {
		names := make([]string, 0, len(s.Events))
		for n := range s.Events {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, n := range names {
			names[i] = fmt.Sprintf("%s=%d", n, s.Events[n])
		}
		row(s.Path, fmt.Sprint(s.Packets), fmt.Sprint(s.Discarded), strings.Join(names, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if histograms {
		for _, d := range r.Checkpoints {
			writeHistogram(w, fmt.Sprintf("%s %s", d.Label, d.Name), d.Summary)
		}
		for _, d := range r.RPCs {
			writeHistogram(w, fmt.Sprintf("%s -> %s %s", d.Caller, d.Callee, d.Name), d.Summary)
		}
		for _, q := range r.Queues {
			fmt.Fprintf(w, "\n%s %s: fill histogram (share of capacity)\n", q.Label, q.Name)
			var top uint64
			for _, c := range q.Histogram {
				top = max(top, c)
			}
			for i, c := range q.Histogram {
				fmt.Fprintf(w, "  %3d%%-%3d%% %8d %s\n", i*10, i*10+10, c, bar(c, top))
			}
		}
	}
	return nil
}

func writeHistogram(w io.Writer, title string, s Summary) {
	if s.Count == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s: duration histogram\n", title)
	var top uint64
	for _, b := range s.Histogram {
		top = max(top, b.Count)
	}
	for _, b := range s.Histogram {
		fmt.Fprintf(w, "  %10s-%-10s %8d %s\n", dur(b.Lo), dur(b.Hi), b.Count, bar(b.Count, top))
	}
}

func bar(n, top uint64) string {
	if top == 0 {
		return ""
	}
	return strings.Repeat("#", int((n*40+top-1)/top))
}
