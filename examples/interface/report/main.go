// Command report is the deployment-specific walk-through of flowtable on
// the example trace: it replays examples/interface/mixed.pcap through
// build/bpf/flowtable.o in the interpreter, prints the percentiles of the
// instruction count, draws its CDF per class, ranks what explains the
// slowest 10%, and (as root, with -measure) times each class with
// BPF_PROG_TEST_RUN next to its instruction count.
//
//	go run ./examples/interface/report -out /tmp/cdf -measure
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/classtime"
	"github.com/dpperf/dpperf/replay"
	"github.com/dpperf/dpperf/replay/dist"
	"github.com/dpperf/dpperf/replay/rootcause"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// classOf names a run by verdict, map operations and instruction count:
// runs of one class take one instruction count.
func classOf(pkt *replay.Packet) string {
	return fmt.Sprintf("%s [%d]", replay.Signature(pkt.Result), pkt.Result.Count)
}

type class struct {
	name    string
	packets int
	insns   int
}

func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	obj := fs.String("obj", "build/bpf/flowtable.o", "BPF object")
	pcap := fs.String("pcap", "examples/interface/mixed.pcap", "capture to replay")
	out := fs.String("out", "", "directory for cdf.png and cdf.svg (none if empty)")
	measure := fs.Bool("measure", false, "time each class with BPF_PROG_TEST_RUN (root)")
	runs := fs.Int("runs", 200, "single runs per representative with -measure")
	per := fs.Int("per-class", 3, "representatives per class with -measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := bpfprog.LoadFile(*obj, "")
	if err != nil {
		return err
	}
	ctx := context.Background()
	var costs []float64
	var samples []rootcause.Sample
	classes := map[string]*class{}
	var order []string
	byVerdict := map[string][]float64{}
	sum, err := replay.File(ctx, p, *pcap, replay.Options{}, func(pkt *replay.Packet) error {
		if pkt.Result == nil {
			return nil
		}
		n := float64(pkt.Result.Count)
		costs = append(costs, n)
		samples = append(samples, replay.Sample(pkt.Result, n))
		v := replay.Verdict(pkt.Result.Verdict)
		byVerdict[v] = append(byVerdict[v], n)
		c := classOf(pkt)
		if classes[c] == nil {
			classes[c] = &class{name: c, insns: pkt.Result.Count}
			order = append(order, c)
		}
		classes[c].packets++
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replayed %s through %s: %d frames, %d ran, %d did not (runts), %.0f packets/s\n\n",
		*pcap, p.Name, sum.Packets, sum.Ran, sum.Failed, float64(sum.Packets)/sum.Elapsed.Seconds())
	ps, err := dist.Percentiles(costs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "instructions per packet (nearest rank): p0 %.0f  p10 %.0f  p50 %.0f  p90 %.0f  p99 %.0f  p100 %.0f\n\n",
		ps[0], ps[10], ps[50], ps[90], ps[99], ps[100])
	if *out != "" {
		c := dist.CDF{Title: p.Name + " on " + filepath.Base(*pcap), XLabel: "instructions per packet (interpreter)"}
		for _, v := range slices.Sorted(maps.Keys(byVerdict)) {
			c.Series = append(c.Series, dist.Series{Name: v, Values: byVerdict[v]})
		}
		c.Series = append(c.Series, dist.Series{Name: "all", Values: costs})
		for _, ext := range []string{"png", "svg"} {
			if err := c.WriteFile(filepath.Join(*out, "cdf."+ext)); err != nil {
				return err
			}
		}
	}
	tab, err := rootcause.Rank(samples, rootcause.Slow{Percentile: 90})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "what explains the slowest packets (%d above %.0f instructions, %d at most):\n", tab.Slow, tab.Threshold, tab.Fast)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, r := range tab.Rows[:min(6, len(tab.Rows))] {
		fmt.Fprintf(tw, "  %s\t%.2f\t%s\n", r.Name, r.Score, r.Explanation)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if !*measure {
		tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "packets\tinsns\t class\t")
		for _, name := range order {
			c := classes[name]
			fmt.Fprintf(tw, "%d\t%d\t %s\t\n", c.packets, c.insns, c.name)
		}
		return tw.Flush()
	}
	return measureClasses(ctx, w, p, *pcap, classes, order, *runs, *per)
}

func measureClasses(ctx context.Context, w io.Writer, p *bpfprog.Program, pcap string, classes map[string]*class, order []string, runs, per int) error {
	reps, err := replay.Representatives(ctx, p, pcap, replay.Options{}, per, classOf)
	if err != nil {
		return err
	}
	m, err := classtime.Open(p, classtime.Options{Runs: runs})
	if err != nil {
		return err
	}
	defer m.Close()
	rep, err := m.Measure(ctx, classtime.FromReps(reps))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "measured with BPF_PROG_TEST_RUN: %d single runs per representative after restoring its map state; harness overhead (empty program) %.0f ns\n", runs, rep.Overhead)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "packets\tinsns\tmedian ns\tp10\tp90\tnet ns\trepeat ns\t class\t")
	var x, y []float64
	for _, c := range rep.Classes {
		k := classes[c.Name]
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t %s\t\n", k.packets, k.insns, c.Median, c.P10, c.P90, c.Net, c.RepeatNs, c.Name)
		x, y = append(x, float64(k.insns)), append(y, c.Net)
	}
	tw.Flush()
	a, b := stat.LinearRegression(x, y, nil, false)
	fmt.Fprintf(w, "\nleast squares over classes: net ns ≈ %.1f + %.2f × instructions, R² %.2f\n", a, b, stat.RSquared(x, y, nil, a, b))
	return nil
}
