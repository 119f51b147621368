package analyze

import (
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

func builtin(t testing.TB, name string) *path.Path {
	p, err := path.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sliceSource replays events.
type sliceSource struct {
	evs []event.Event
	i   int
}

func (s *sliceSource) Next() (event.Event, error) {
	if s.i == len(s.evs) {
		return event.Event{}, io.EOF
	}
	s.i++
	return s.evs[s.i-1], nil
}

// blockReq returns the Q, G, D, C events of one 4 KiB read at start with
// the given stage durations (no I event, as on a device without scheduler).
func blockReq(sector uint64, start, q2g, g2d, d2c int64) []event.Event {
	dev := event.MakeDev(7, 0)
	mk := func(kind uint8, ts int64) event.Event {
		return event.Event{TS: ts, Sector: sector, Dev: dev, Bytes: 4096, Kind: kind, Op: event.OpRead}
	}
	return []event.Event{mk(0, start), mk(1, start+q2g), mk(3, start+q2g+g2d), mk(4, start+q2g+g2d+d2c)}
}

func TestBreakdownKnownAnswer(t *testing.T) {
	p := builtin(t, "block")
	var evs []event.Event
	// 100 sequential requests, one every 100µs, each Q2G 1µs, G2D 2µs, D2C 50µs.
	for i := 0; i < 100; i++ {
		evs = append(evs, blockReq(uint64(i*8), int64(i)*100_000+1_000_000, 1000, 2000, 50_000)...)
	}
	a, st, err := Run(context.Background(), &sliceSource{evs: evs}, Options{Path: p, GroupBy: GroupBy{Type: true, Size: true}, MaxOpen: 64, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 100 || st.Orphans != 0 || st.Open != 0 {
		t.Fatalf("stats %+v", st)
	}
	pr := Summarize(a, p, 1)
	if len(pr.Groups) != 1 || pr.Groups[0].Key != "read 4KiB" {
		t.Fatalf("groups %+v", pr.Groups)
	}
	g := pr.Groups[0]
	want := map[string]float64{"Q2G": 1000, "G2I+I2D": 2000, "D2C": 50_000}
	if len(g.Stages) != 3 {
		t.Fatalf("stages %+v", g.Stages)
	}
	for _, s := range g.Stages {
		if s.Latency.MeanNS != want[s.Name] || s.Latency.Count != 100 {
			t.Errorf("stage %s mean %v count %d, want %v", s.Name, s.Latency.MeanNS, s.Latency.Count, want[s.Name])
		}
		if s.Merged != (s.Name == "G2I+I2D") {
			t.Errorf("stage %s merged=%v", s.Name, s.Merged)
		}
	}
	if g.Latency.MeanNS != 53_000 {
		t.Errorf("end-to-end mean %v", g.Latency.MeanNS)
	}
	// Window: first Q at 1ms, last C at 1ms+99*100µs+53µs.
	secs := float64(99*100_000+53_000) / 1e9
	if math.Abs(pr.Window.Seconds-secs) > 1e-12 {
		t.Errorf("window %v, want %v", pr.Window.Seconds, secs)
	}
	// Little's law: occupancy of D2C = rate × latency.
	rate := 100 / secs
	for _, s := range g.Stages {
		if s.Name == "D2C" && math.Abs(s.Occupancy-rate*50e-6) > 1e-9 {
			t.Errorf("D2C occupancy %v, want %v", s.Occupancy, rate*50e-6)
		}
	}
	if math.Abs(g.IOPS-rate) > 1e-6 || math.Abs(g.MBps-rate*4096/1e6) > 1e-9 {
		t.Errorf("IOPS %v MB/s %v", g.IOPS, g.MBps)
	}
}

func TestBuilderEdgeCases(t *testing.T) {
	p := builtin(t, "block")
	b := NewBuilder(p, nil, 16)
	// An event before its request started is an orphan.
	if r := b.Add(blockReq(8, 0, 1, 1, 1)[3]); r != nil || b.Stats().Orphans != 1 {
		t.Fatalf("orphan: %v %+v", r, b.Stats())
	}
	// A second start on the same key drops the first request.
	q := blockReq(16, 100, 1, 1, 1)
	b.Add(q[0])
	b.Add(q[0])
	if b.Stats().Restarted != 1 {
		t.Errorf("restarted %+v", b.Stats())
	}
	// Filling the buffer evicts the oldest open request.
	for i := 0; i < 40; i++ {
		b.Add(blockReq(uint64(1000+i*8), int64(200+i), 1, 1, 1)[0])
	}
	st := b.Stats()
	if st.Open != 16 || st.Evicted != 41-16 {
		t.Errorf("after 41 starts with room for 16: %+v", st)
	}
	// The newest requests are still open and complete.
	last := blockReq(uint64(1000+39*8), 239, 1, 1, 1)
	var done *event.Record
	for _, ev := range last[1:] {
		done = b.Add(ev)
	}
	if done == nil || done.TS[4]-done.TS[0] != 3 {
		t.Errorf("newest request did not complete: %+v", done)
	}
}

func TestBuilderJoinNVMe(t *testing.T) {
	p := builtin(t, "nvme-tcp")
	dev := event.MakeDev(259, 1)
	idx := func(n string) uint8 { return uint8(p.EventIndex(n)) }
	evs := []event.Event{
		{TS: 100, QID: 2, CID: 7, CPU: 1, Op: event.OpRead, Kind: idx("QUEUE_RQ")},
		{TS: 110, Dev: dev, Sector: 64, Bytes: 4096, Op: event.OpRead, CPU: 1, Kind: idx("BLK_ISSUE")}, // joins via CPU 1
		{TS: 111, Dev: dev, Sector: 999, Bytes: 4096, CPU: 1, Kind: idx("BLK_ISSUE")},                  // no second join: orphan
		{TS: 150, QID: 2, CID: 7, CPU: 0, Kind: idx("TARGET_RECV")},
		{TS: 180, QID: 2, CID: 7, CPU: 0, Kind: idx("TARGET_DONE")},
		{TS: 230, QID: 2, CID: 7, CPU: 1, Kind: idx("HOST_CQE")},
		{TS: 235, Dev: dev, Sector: 64, CPU: 1, Kind: idx("BLK_COMPLETE")},
	}
	observed := make([]bool, len(p.Events))
	for i := range observed {
		observed[i] = i != p.EventIndex("TARGET_EXEC") // kprobe: not available
	}
	a, st, err := Run(context.Background(), &sliceSource{evs: evs}, Options{Path: p, Observed: observed, GroupBy: GroupBy{Type: true}})
	if err != nil || st.Records != 1 || st.Orphans != 1 {
		t.Fatalf("records %+v err %v", st, err)
	}
	g := Summarize(a, p, 1).Groups[0]
	got := map[string]float64{}
	for _, s := range g.Stages {
		got[s.Name] = s.Latency.MeanNS
	}
	want := map[string]float64{"host-issue": 10, "send-net-recv": 40, "target-queue+target-device": 30, "resp-net-recv": 50, "host-complete": 5}
	if len(got) != len(want) {
		t.Fatalf("stages %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stage %s = %v, want %v", k, got[k], v)
		}
	}
	if g.Key != "read" {
		t.Errorf("group %q: the op of the command should carry over", g.Key)
	}
}

func TestFilterSampling(t *testing.T) {
	f := Filter{Sample: 10, HasOp: true, Op: event.OpRead, MinBytes: 4096, MaxBytes: 8192}
	kept := 0
	for i := 0; i < 1000; i++ {
		if f.Keep(&event.Record{Op: event.OpRead, Bytes: 4096}) {
			kept++
		}
	}
	if kept != 100 {
		t.Errorf("kept %d of 1000 with 1/10 sampling", kept)
	}
	for _, r := range []event.Record{{Op: event.OpWrite, Bytes: 4096}, {Op: event.OpRead, Bytes: 512}, {Op: event.OpRead, Bytes: 65536}} {
		if (&Filter{HasOp: true, Op: event.OpRead, MinBytes: 4096, MaxBytes: 8192}).Keep(&r) {
			t.Errorf("kept %+v", r)
		}
	}
}

func TestCompareKnownAnswer(t *testing.T) {
	mk := func(stages map[string]float64) *Profile {
		g := Group{Key: "read 4KiB", Requests: 10}
		var total float64
		for _, n := range []string{"Q2G", "G2I+I2D", "D2C"} {
			cause := map[string]string{"Q2G": "queue", "G2I+I2D": "queue", "D2C": "device"}[n]
			g.Stages = append(g.Stages, Stage{Name: n, Cause: cause, Latency: Dist{Count: 10, MeanNS: stages[n]}})
			total += stages[n]
		}
		g.Latency = Dist{Count: 10, MeanNS: total}
		return &Profile{Schema: Schema, Groups: []Group{g}}
	}
	base := mk(map[string]float64{"Q2G": 1000, "G2I+I2D": 1000, "D2C": 50_000})
	loaded := mk(map[string]float64{"Q2G": 11_000, "G2I+I2D": 1000, "D2C": 250_000})
	c := Compare(base, loaded, "b", "l")
	if len(c.Groups) != 1 {
		t.Fatal(c)
	}
	g := c.Groups[0]
	if math.Abs(g.LAD-262.0/52) > 1e-12 {
		t.Errorf("LAD %v", g.LAD)
	}
	if len(g.Bottleneck) != 1 || g.Bottleneck[0] != "D2C" || g.Cause != "device" {
		t.Errorf("bottleneck %v cause %s", g.Bottleneck, g.Cause)
	}
	for _, s := range g.Stages {
		switch s.Name {
		case "D2C":
			if s.LAD != 5 || s.DeltaNS != 200_000 || math.Abs(s.ShareOfIncrease-200.0/210) > 1e-12 {
				t.Errorf("D2C %+v", s)
			}
		case "Q2G":
			if s.LAD != 11 {
				t.Errorf("Q2G LAD %v", s.LAD)
			}
		}
	}
	// Q2G has the largest LAD but D2C carries the increase: it is D2C
	// that is named. With Q2G carrying a quarter of the increase too, both.
	loaded2 := mk(map[string]float64{"Q2G": 71_000, "G2I+I2D": 1000, "D2C": 250_000})
	g2 := Compare(base, loaded2, "b", "l").Groups[0]
	if len(g2.Bottleneck) != 2 || g2.Bottleneck[0] != "D2C" || g2.Bottleneck[1] != "Q2G" {
		t.Errorf("bottleneck %v", g2.Bottleneck)
	}
	same := Compare(base, base, "b", "b").Groups[0]
	if same.Verdict != "no latency increase" || len(same.Bottleneck) != 0 {
		t.Errorf("self-compare %+v", same)
	}
}

func TestCancelKeepsRecords(t *testing.T) {
	p := builtin(t, "block")
	var evs []event.Event
	for i := 0; i < 5000; i++ {
		evs = append(evs, blockReq(uint64(i*8), int64(i)*1000+1, 1, 1, 1)...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a, _, err := Run(ctx, &sliceSource{evs: evs}, Options{Path: p})
	if err != nil || a == nil {
		t.Fatalf("cancelled run: %v", err)
	}
	if a.Records() >= 5000 {
		t.Errorf("cancelled run analyzed everything")
	}
}

func TestOnlineIntervals(t *testing.T) {
	p := builtin(t, "block")
	var evs []event.Event
	for i := 0; i < 30; i++ { // 30 requests, 100ms apart: three 1s intervals
		evs = append(evs, blockReq(uint64(i*8), int64(i)*100_000_000, 10, 10, 10)...)
	}
	var per []int64
	_, _, err := Run(context.Background(), &sliceSource{evs: evs}, Options{Path: p, Interval: 1e9, OnInterval: func(a *Aggregator) { per = append(per, a.Records()) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 3 || per[0] != 10 || per[1] != 10 || per[2] != 10 {
		t.Errorf("records per interval %v, want [10 10 10]", per)
	}
}

func TestSpillRecords(t *testing.T) {
	p := builtin(t, "block")
	var evs []event.Event
	for i := 0; i < 3; i++ {
		evs = append(evs, blockReq(uint64(i*8), int64(i)*1000+500, 10, 20, 30)...)
	}
	var buf strings.Builder
	rw := NewRecordWriter(&buf, p)
	if _, _, err := Run(context.Background(), &sliceSource{evs: evs}, Options{Path: p, Spill: rw, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	want := "start_ns,op,bytes,dev,cpu,Q,G,I,D,C\n" +
		"500,read,4096,7:0,0,0,10,,30,60\n" +
		"1500,read,4096,7:0,0,0,10,,30,60\n" +
		"2500,read,4096,7:0,0,0,10,,30,60\n"
	if buf.String() != want {
		t.Errorf("records:\n%s\nwant:\n%s", buf.String(), want)
	}
}
