// Command twohost serves the two-guest NVMe/TCP end-to-end run
// (scripts/e2e/nvme-tcp-2host.sh): it gives the two guests' clocks a
// common instant, and checks the joined report.
//
// Usage:
//
//	twohost stamp DEV              (in a guest) print CLOCK_MONOTONIC at each line read from DEV
//	twohost pulse N SOCK SOCK      (on the host) write a line to both guests' serial sockets, N times
//	twohost check -joined J -one O [-contended C] [-interrupted DIR] -target-stamps T -initiator-stamps I
//
// The known offset. pulse writes one line to the initiator's second
// serial port and, microseconds later, one to the target's; each guest's
// stamp reads it and prints its monotonic clock. The difference of the
// two stamps of a pulse is the offset (target minus initiator) plus the
// difference of the two guests' delays from the socket to the reading
// process, which under emulation is not small: check takes the median
// over the pulses as the known offset and half the range of the
// differences as its precision, and says both.
//
// check fails (exit 1) unless every request of either side is joined or
// counted unjoined with a reason, at least 90% of the initiator's are
// joined, no stage has a negative time, and the estimated offset at the
// pulses' time is within its error bound plus the known offset's
// precision of the known offset. It prints the stage table of the joined
// run beside the one-host run's, and fails when the target's device
// stage (null_blk's timer, measured on the target's clock in both runs)
// differs in median by more than a factor 2 (four runs: 1.09 to 1.31):
// a check that the two runs did the same work. The other stages are not
// held to the one-host run's: its network is loopback inside one guest,
// the two-host run's an emulated NIC in each guest and a socket between
// two qemu processes, and the target's queue stage shares its vCPU with
// that NIC.
//
// With -contended, check compares the joined run with one made while
// local fio jobs on the target hold the namespace's tags, and fails
// unless latency amplification names target-device first. With
// -interrupted DIR, it reads what each guest wrote after stopping its
// dpperf with SIGINT (interrupt-ROLE.txt: exit code, tracefs instances,
// kprobes and fio processes left) and both interrupted reports, and
// fails unless both exited 130, left nothing, are marked interrupted,
// and the initiator's still joined the target's records; and the
// initiator's runs against a peer refusing its token and a peer that is
// down (joined-wrong-token.json, joined-peer-down.json,
// interrupt-faults.txt) must each give a report of its own requests
// marked partial, leaving nothing behind.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/profile/analyze"
)

// maxLocalShareDiff is how far a stage's local share may differ between
// the two-host and the one-host run (0.10: ten points).
const maxLocalShareDiff = 0.10

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "twohost:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: twohost stamp|pulse|check ARGS")
	}
	switch args[0] {
	case "stamp":
		if len(args) != 2 {
			return errors.New("usage: twohost stamp DEV")
		}
		return stamp(args[1], stdout)
	case "pulse":
		if len(args) != 4 {
			return errors.New("usage: twohost pulse N SOCK SOCK")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return err
		}
		return pulse(n, args[2], args[3])
	case "check":
		return check(args[1:], stdout)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func mono() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// stamp prints "stamp K NS" for the K-th line read from dev.
func stamp(dev string, stdout io.Writer) error {
	f, err := os.Open(dev)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64)
	k := 0
	for {
		n, err := f.Read(buf)
		t := mono()
		if err != nil {
			return err
		}
		for _, b := range buf[:n] {
			if b == '\n' {
				k++
				fmt.Fprintf(stdout, "stamp %d %d\n", k, t)
			}
		}
	}
}

// pulse connects to both serial sockets and writes a line to each in
// turn, n times, 200 ms apart.
func pulse(n int, a, b string) error {
	var conns []net.Conn
	for _, s := range []string{a, b} {
		c, err := net.Dial("unix", s)
		if err != nil {
			return err
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i := 0; i < n; i++ {
		for _, c := range conns {
			if _, err := c.Write([]byte("x\n")); err != nil {
				return err
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// readStamps reads "stamp K NS" lines.
func readStamps(name string) (map[int]int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[int]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var k int
		var ns int64
		if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "stamp %d %d", &k, &ns); err == nil {
			out[k] = ns
		}
	}
	return out, sc.Err()
}

func readProfile(name string) (*analyze.Profile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var p analyze.Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &p, nil
}

func check(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	joinedF := fs.String("joined", "", "the initiator's joined JSON report")
	oneF := fs.String("one", "", "the one-host JSON report of the same workload")
	tsF := fs.String("target-stamps", "", "the target's stamp lines")
	isF := fs.String("initiator-stamps", "", "the initiator's stamp lines")
	contF := fs.String("contended", "", "the joined JSON report of the run under local load on the target")
	intF := fs.String("interrupted", "", "the directory of the interrupted runs' reports and leftover counts")
	outF := fs.String("o", "", "also write the summary to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	joined, err := readProfile(*joinedF)
	if err != nil {
		return err
	}
	one, err := readProfile(*oneF)
	if err != nil {
		return err
	}
	ts, err := readStamps(*tsF)
	if err != nil {
		return err
	}
	is, err := readStamps(*isF)
	if err != nil {
		return err
	}
	var sb strings.Builder
	var fails []string
	h := joined.Hosts
	if h == nil || h.Clock == nil {
		return fmt.Errorf("%s: no joined requests (hosts: %+v)", *joinedF, h)
	}
	j := h.Join
	un := map[string]int64{}
	for _, u := range j.Unjoined {
		un[u.Side] += u.Count
		fmt.Fprintf(&sb, "unjoined %s: %d (%s)\n", u.Side, u.Count, u.Reason)
	}
	fmt.Fprintf(&sb, "joined %d of %d initiator requests (%.1f%%), target %d, shifted %d\n", j.Joined, j.Initiator, 100*float64(j.Joined)/float64(max(j.Initiator, 1)), j.Target, j.Shifted)
	if j.Joined+un["initiator"] != j.Initiator || j.Joined+un["target"] != j.Target {
		fails = append(fails, "joined and unjoined requests do not add up to each side's")
	}
	if float64(j.Joined) < 0.9*float64(j.Initiator) {
		fails = append(fails, "fewer than 90% of the initiator's requests joined")
	}
	// The known offset: the pulses both guests stamped.
	var diffs []float64
	var tI float64
	for k, ti := range is {
		if tt, ok := ts[k]; ok {
			diffs = append(diffs, float64(tt-ti))
			tI += float64(ti)
		}
	}
	if len(diffs) < 3 {
		return fmt.Errorf("only %d clock pulses stamped by both guests", len(diffs))
	}
	tI /= float64(len(diffs))
	sort.Float64s(diffs)
	known := diffs[len(diffs)/2]
	precision := (diffs[len(diffs)-1] - diffs[0]) / 2
	c := h.Clock
	est := c.OffsetNS + c.DriftPPM*1e-6*(tI-float64(c.RefNS))
	fmt.Fprintf(&sb, "offset: estimated %.0f ns ±%.0f ns (drift %+.2f ppm, %d requests); known %.0f ns ±%.0f ns (median of %d pulses, half their range); difference %.0f ns\n",
		est, c.ErrorBoundNS, c.DriftPPM, c.Requests, known, precision, len(diffs), est-known)
	if math.Abs(est-known) > c.ErrorBoundNS+precision {
		fails = append(fails, "the estimated offset is not within its bound (plus the known offset's precision) of the known offset")
	}
	if len(joined.Groups) == 0 || len(one.Groups) == 0 {
		return errors.New("a report has no group")
	}
	g, o := joined.Groups[0], one.Groups[0]
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\ttwo hosts avg\tshare\tlocal\t± clock\tone host avg\tshare\tlocal\t")
	oneBy := map[string]analyze.Stage{}
	for _, s := range o.Stages {
		oneBy[s.Name] = s
	}
	// The local shares: each stage's part of the time spent on one host
	// (the stages that do not cross hosts), in which the two runs do the
	// same work; the network stages are loopback in one run and an
	// emulated link in the other.
	var local2, local1 float64
	for _, s := range g.Stages {
		if s.ClockBoundNS == 0 {
			local2 += s.Share
			local1 += oneBy[s.Name].Share
		}
	}
	for _, s := range g.Stages {
		if s.Latency.MinNS < 0 {
			fails = append(fails, "negative time in stage "+s.Name)
		}
		b := oneBy[s.Name]
		bound, l2, l1 := "-", "-", "-"
		if s.ClockBoundNS > 0 {
			bound = analyze.FormatNS(s.ClockBoundNS)
		} else if local2 > 0 && local1 > 0 {
			x2, x1 := s.Share/local2, b.Share/local1
			l2, l1 = fmt.Sprintf("%.1f%%", 100*x2), fmt.Sprintf("%.1f%%", 100*x1)
			if math.Abs(x2-x1) > maxLocalShareDiff {
				fails = append(fails, fmt.Sprintf("stage %s: local share %.1f%% on two hosts, %.1f%% on one", s.Name, 100*x2, 100*x1))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%s\t%s\t%s\t%.1f%%\t%s\t\n", s.Name, analyze.FormatNS(s.Latency.MeanNS), 100*s.Share, l2, bound, analyze.FormatNS(b.Latency.MeanNS), 100*b.Share, l1)
		if s.Name == "target-device" && b.Latency.Count > 0 {
			r := float64(s.Latency.P(50)) / float64(b.Latency.P(50))
			fmt.Fprintf(&sb, "target-device p50: two hosts %s, one host %s (ratio %.2f)\n", analyze.FormatNS(float64(s.Latency.P(50))), analyze.FormatNS(float64(b.Latency.P(50))), r)
			if r > 2 || r < 0.5 {
				fails = append(fails, "the target's device stage (p50) differs by more than a factor 2 from the one-host run's")
			}
		}
	}
	fmt.Fprintf(tw, "end to end\t%s\t\t\t\t%s\t\t\t\n", analyze.FormatNS(g.Latency.MeanNS), analyze.FormatNS(o.Latency.MeanNS))
	tw.Flush()
	if *contF != "" {
		f, err := checkContended(joined, *contF, &sb)
		if err != nil {
			return err
		}
		fails = append(fails, f...)
	}
	if *intF != "" {
		f, err := checkInterrupted(*intF, &sb)
		if err != nil {
			return err
		}
		fails = append(fails, f...)
		if f, err = checkFaults(*intF, &sb); err != nil {
			return err
		}
		fails = append(fails, f...)
	}
	fmt.Fprint(stdout, sb.String())
	if *outF != "" {
		f, err := atomicfile.Create(*outF)
		if err != nil {
			return err
		}
		f.Write([]byte(sb.String()))
		if err := f.Commit(); err != nil {
			return err
		}
	}
	if len(fails) > 0 {
		return errors.New(strings.Join(fails, "; "))
	}
	return nil
}
