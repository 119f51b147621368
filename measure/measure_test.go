package measure

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/calibrate"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/target"
)

// measured bounds one program under the built-in x86-64 target, measures
// its example and returns the costed graph with the result.
func measured(t *testing.T, file, prog string) (*bound.Costed, *bound.Result) {
	t.Helper()
	return measuredWith(t, file, prog, nil)
}

// measuredWith is measured with the target's calibration set to cal.
func measuredWith(t *testing.T, file, prog string, cal *target.Calibration) (*bound.Costed, *bound.Result) {
	t.Helper()
	tg, err := target.Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	tg.Calibration = cal
	return measuredUnder(t, file, prog, tg)
}

// measuredUnder is measured under target tg.
func measuredUnder(t *testing.T, file, prog string, tg *target.Target) (*bound.Costed, *bound.Result) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("BPF_PROG_TEST_RUN needs root")
	}
	p, err := bpfprog.LoadFile(file, prog)
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.Build(p, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := bound.Cost(g, tg)
	res, err := bound.SSP(context.Background(), c, bound.SearchOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := Paths(c, c, res); err != nil {
		t.Fatal(err)
	}
	if res.Paths[0].Measured == nil {
		t.Fatal("the example was not measured")
	}
	return c, res
}

// TestStatelessExample: a program whose example repeats its own path is
// held against that path's rate, which is the bound.
func TestStatelessExample(t *testing.T) {
	_, res := measured(t, testobj.Built(t, "fig2"), "")
	m := res.Paths[0].Measured
	if m.Stateful || len(m.Checks) != 1 {
		t.Fatalf("checks %+v, stateful %v", m.Checks, m.Stateful)
	}
	c := m.Checks[0]
	if c.Path != "example" || c.How != "repeated" || c.Predicted != res.Bound.PacketRate || c.Expected != c.Predicted ||
		c.Measured <= 0 || c.Held != (c.Measured >= c.Predicted) {
		t.Errorf("check %+v, bound %g", c, res.Bound.PacketRate)
	}
}

// TestStatefulExampleAndRepeats: flowtable's slowest path inserts a new
// flow; its repeats find the flow. The example is held against the bound
// in single runs, the repeats against their own, shorter path's rate.
func TestStatefulExampleAndRepeats(t *testing.T) {
	_, res := measured(t, testobj.Built(t, "flowtable"), "")
	m := res.Paths[0].Measured
	if !m.Stateful || len(m.Checks) != 2 {
		t.Fatalf("checks %+v, stateful %v (%s)", m.Checks, m.Stateful, m.Unchecked)
	}
	ex, rep := m.Checks[0], m.Checks[1]
	if ex.Path != "example" || ex.How != "single runs" || ex.Predicted != res.Bound.PacketRate || ex.Instructions != res.Paths[0].Instructions {
		t.Errorf("example check %+v, bound %g, %d instructions", ex, res.Bound.PacketRate, res.Paths[0].Instructions)
	}
	if rep.Path != "repeats" || rep.How != "repeated" || rep.Instructions >= ex.Instructions || rep.Predicted <= ex.Predicted {
		t.Errorf("repeats check %+v: want a shorter, faster path than the example's %+v", rep, ex)
	}
	if rep.Measured != m.PacketRate {
		t.Errorf("repeats measured %g, the repeated timing %g", rep.Measured, m.PacketRate)
	}
}

// TestStatefulStream: under a calibration of an x86-64 host, flowtable's
// slowest path inserts an IPv6 flow. It is timed on a stream of new
// flows, counted in bytes of the flow key, as many as the LRU map has
// room for (it starts empty), and the stream's time is what the example's
// check holds against the bound.
func TestStatefulStream(t *testing.T) {
	tg, err := target.Load("../bound/testdata/x86-64-throughput.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, res := measuredUnder(t, testobj.Built(t, "flowtable"), "", tg)
	m := res.Paths[0].Measured
	if !m.Stateful || m.StreamRuns != 1024 || m.SingleRuns != 0 || m.StreamDense {
		t.Fatalf("stateful %v, stream of %d runs (dense %v), %d single runs: want a stream of 1024 new flows", m.Stateful, m.StreamRuns, m.StreamDense, m.SingleRuns)
	}
	// IPv6 source and destination, then the TCP ports.
	if m.StreamOffset < 22 || m.StreamOffset+2 > 58 {
		t.Errorf("stream counts at bytes %d-%d, outside the flow key's addresses and ports", m.StreamOffset, m.StreamOffset+1)
	}
	ex := m.Checks[0]
	if ex.Path != "example" || ex.How != "new flows" || ex.Predicted != res.Bound.PacketRate || ex.Measured != 1e9/m.StreamNs {
		t.Errorf("example check %+v: want the stream's rate (%g ns) against the bound %g", ex, m.StreamNs, res.Bound.PacketRate)
	}
}

// TestSocketMap: xsk_def_xdp_prog_5.3's slowest path redirects to the
// AF_XDP socket of the packet's queue. Its xsks_map gets a real socket
// there, so the packet takes the predicted path and the kernel, the
// interpreter and the solver agree on XDP_REDIRECT.
func TestSocketMap(t *testing.T) {
	_, res := measured(t, filepath.Join(testobj.LibXDPDir, "xsk_def_xdp_prog_5.3.o"), "")
	m := res.Paths[0].Measured
	if !m.PathMatches || !m.VerdictMatches || m.KernelVerdict != 4 || len(m.Checks) != 1 || m.Checks[0].Path != "example" {
		t.Fatalf("path matches %v (%s), verdicts %d/%d match %v, checks %+v: want the example's own path, redirected",
			m.PathMatches, m.Mismatch, m.KernelVerdict, m.InterpVerdict, m.VerdictMatches, m.Checks)
	}
}

// TestSlowSpeed: with a calibration that timed the speed probe, every
// timing is carried to the calibration's slow speed by the probe timed
// around it. A probe "high" of 1 ms a run (the probe runs in about 0.1 µs)
// multiplies the times by thousands, an order no disturbance reaches;
// without the probe nothing is carried.
func TestSlowSpeed(t *testing.T) {
	cal := &target.Calibration{Runs: 1, Percentile: 90, Spread: map[string]target.Spread{calibrate.SpeedKey: {Min: 1e6, Median: 1e6, High: 1e6, Max: 1e6}}}
	_, res := measuredWith(t, testobj.Built(t, "flowtable"), "", cal)
	m := res.Paths[0].Measured
	if !m.Stateful || m.SlowNs < 1000*m.NsPerPacket || m.SingleSlowNs < 1000*m.SingleNs {
		t.Fatalf("repeated %g ns, at the slow speed %g; single %g ns, at the slow speed %g: want each carried by more than 1000", m.NsPerPacket, m.SlowNs, m.SingleNs, m.SingleSlowNs)
	}
	for _, c := range m.Checks {
		if c.AtSlowSpeed <= 0 || c.AtSlowSpeed > c.Measured/1000 {
			t.Errorf("check %+v: want a rate at the slow speed below a thousandth of the measured one", c)
		}
	}
	_, res = measured(t, testobj.Built(t, "fig2"), "")
	if m := res.Paths[0].Measured; m.SlowNs != 0 || m.Checks[0].AtSlowSpeed != 0 {
		t.Errorf("no probe in the calibration, but %g ns at the slow speed (%+v)", m.SlowNs, m.Checks[0])
	}
}
