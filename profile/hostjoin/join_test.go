package hostjoin

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
	"github.com/dpperf/dpperf/profile/tracetext"
)

func nvmePath(t *testing.T) (*path.Path, Sides) {
	t.Helper()
	p, err := path.Lookup("nvme-tcp")
	if err != nil {
		t.Fatal(err)
	}
	s, err := SidesOf(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

// world is a synthetic two-host run: requests on queues of depth qd, each
// with its own network delays, the target's clock at offset + drift·t.
type world struct {
	offset, drift float64 // ns, and ns per ns
	n, queues, qd int
	seed          uint64
}

// trueOffset is the target's clock minus the initiator's at initiator
// time t.
func (w world) trueOffset(t float64) float64 { return w.offset + w.drift*t }

// events makes the initiator's and the target's events of the nvme-tcp
// path: QUEUE_RQ, BLK_ISSUE, TARGET_RECV, TARGET_DONE, HOST_CQE,
// BLK_COMPLETE.
func (w world) events(p *path.Path) (init, target []event.Event) {
	rng := rand.New(rand.NewPCG(w.seed, 1))
	k := func(name string) uint8 { return uint8(p.EventIndex(name)) }
	free := make([]int64, w.queues*w.qd) // when each (queue, tag) is free again
	gen := make([]uint16, w.queues*w.qd)
	var sector uint64
	for i := 0; i < w.n; i++ {
		slot := rng.IntN(len(free))
		start := free[slot] + 1_000_000 + int64(rng.IntN(20_000)) // first request 1 ms in
		q, tag := uint16(slot/w.qd+1), uint16(slot%w.qd)
		cid := gen[slot]<<12 | tag
		gen[slot] = (gen[slot] + 1) % 16
		sector += 8
		issue := start + 1_000 + int64(rng.IntN(2_000))
		recv := issue + 15_000 + int64(rng.ExpFloat64()*20_000)
		done := recv + 5_000 + int64(rng.ExpFloat64()*30_000)
		cqe := done + 15_000 + int64(rng.ExpFloat64()*20_000)
		compl := cqe + 500 + int64(rng.IntN(1_000))
		free[slot] = compl
		init = append(init,
			event.Event{TS: start, QID: q, CID: cid, Kind: k("QUEUE_RQ"), Op: event.OpRead, Bytes: 4096, CPU: uint16(slot)},
			event.Event{TS: issue, Dev: 1, Sector: sector, Kind: k("BLK_ISSUE"), Op: event.OpRead, Bytes: 4096, CPU: uint16(slot)},
			event.Event{TS: cqe, QID: q, CID: cid, Kind: k("HOST_CQE")},
			event.Event{TS: compl, Dev: 1, Sector: sector, Kind: k("BLK_COMPLETE"), Op: event.OpRead, Bytes: 4096})
		target = append(target,
			event.Event{TS: recv + int64(w.trueOffset(float64(recv))), QID: q, CID: cid, Kind: k("TARGET_RECV")},
			event.Event{TS: done + int64(w.trueOffset(float64(done))), QID: q, CID: cid, Kind: k("TARGET_DONE")})
	}
	sortEvents(init)
	sortEvents(target)
	return init, target
}

// sortEvents puts the generated events, ordered per slot only, in time
// order as a recording holds them.
func sortEvents(evs []event.Event) {
	sort.SliceStable(evs, func(a, b int) bool { return evs[a].TS < evs[b].TS })
}

func analyzeOpts(p *path.Path) analyze.Options {
	return analyze.Options{Path: p, GroupBy: analyze.GroupBy{Type: true, Size: true}, Workers: 1}
}

func TestJoinKnownOffset(t *testing.T) {
	p, s := nvmePath(t)
	w := world{offset: 3_600e9 + 123_456, drift: 40e-6, n: 4000, queues: 2, qd: 8, seed: 7}
	initEvs, tgtEvs := w.events(p)
	agg, _, hosts, err := s.Analyze(context.Background(), initEvs, tgtEvs, "", analyzeOpts(p), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hosts.Join.Joined != int64(w.n) || len(hosts.Join.Unjoined) != 0 {
		t.Fatalf("joined %d of %d, unjoined %+v", hosts.Join.Joined, w.n, hosts.Join.Unjoined)
	}
	c := hosts.Clock
	got := c.OffsetNS
	want := w.trueOffset(float64(c.RefNS))
	if math.Abs(got-want) > c.ErrorBoundNS {
		t.Errorf("offset %.0f ns, true %.0f ns, bound %.0f ns", got, want, c.ErrorBoundNS)
	}
	if math.Abs(c.DriftPPM-40) > 5 {
		t.Errorf("drift %.2f ppm, true 40 ppm", c.DriftPPM)
	}
	if c.ErrorBoundNS > 25_000 || c.ErrorBoundNS <= 0 {
		t.Errorf("error bound %.0f ns: want within (0, 25 µs]: every request spends at least 15 µs each way", c.ErrorBoundNS)
	}
	if agg.Records() != int64(w.n) {
		t.Errorf("analyzed %d records, want %d", agg.Records(), w.n)
	}
}

// TestJoinBoundHolds is the property: whatever the offset, drift, delays
// and queue layout, the true offset lies within the error bound of the
// estimated line at every joined request, and no joined stage is negative.
func TestJoinBoundHolds(t *testing.T) {
	p, s := nvmePath(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 40; i++ {
		w := world{
			offset: (rng.Float64() - 0.5) * 2e12, drift: (rng.Float64() - 0.5) * 200e-6,
			n: 200 + rng.IntN(1500), queues: 1 + rng.IntN(4), qd: 1 + rng.IntN(32), seed: rng.Uint64(),
		}
		initEvs, tgtEvs := w.events(p)
		recs, _ := Records(initEvs, analyzeOpts(p))
		halves, inc := s.Halves(tgtEvs)
		res := s.Join(recs, halves, inc, Options{})
		c := res.Hosts.Clock
		if c == nil || res.Hosts.Join.Joined != int64(w.n) {
			t.Fatalf("%+v: joined %+v", w, res.Hosts.Join)
		}
		line := func(t float64) float64 {
			return c.OffsetNS + c.DriftPPM*1e-6*(t-float64(c.RefNS))
		}
		for _, r := range res.Joined {
			tm := float64(s.send(&r)+s.done(&r)) / 2
			if d := math.Abs(line(tm) - w.trueOffset(tm)); d > c.ErrorBoundNS+1 {
				t.Fatalf("%+v: at %.0f the line is %.0f ns off the true offset, bound %.0f", w, tm, d, c.ErrorBoundNS)
			}
			prev := int64(0)
			for _, ts := range r.TS {
				if ts != 0 && ts < prev {
					t.Fatalf("%+v: negative stage in %v", w, r.TS)
				}
				prev = max(prev, ts)
			}
		}
	}
}

// TestJoinCountsUnjoined cuts the target's recording short on both ends
// and drops some of its requests: every request is joined or counted with
// a reason.
func TestJoinCountsUnjoined(t *testing.T) {
	p, s := nvmePath(t)
	w := world{offset: -5e9, drift: -10e-6, n: 3000, queues: 2, qd: 4, seed: 3}
	initEvs, tgtEvs := w.events(p)
	cut := tgtEvs[len(tgtEvs)/10 : len(tgtEvs)*9/10]
	var kept []event.Event
	for i, ev := range cut {
		if ev.CID&0xfff == 1 && i%3 == 0 { // lose some target events of tag 1
			continue
		}
		kept = append(kept, ev)
	}
	recs, _ := Records(initEvs, analyzeOpts(p))
	halves, inc := s.Halves(kept)
	res := s.Join(recs, halves, inc, Options{})
	j := res.Hosts.Join
	reasons := map[string]int64{}
	var init, target int64
	for _, u := range j.Unjoined {
		reasons[u.Side+": "+u.Reason] += u.Count
		if u.Side == "initiator" {
			init += u.Count
		} else {
			target += u.Count
		}
	}
	if j.Joined+init != j.Initiator || j.Joined+target != j.Target {
		t.Fatalf("counts do not add up: %+v", j)
	}
	for _, want := range []string{"initiator: before the target's recording", "initiator: after the target's recording", "target: incomplete on the target (its recording began or ended inside it, or lost an event)"} {
		if reasons[want] == 0 {
			t.Errorf("no %q in %v", want, reasons)
		}
	}
	if float64(j.Joined) < 0.6*float64(w.n) {
		t.Errorf("joined %d of %d", j.Joined, w.n)
	}
}

// TestJoinRealTrace splits a one-host nvme-tcp trace (qemu guest, nvmet on
// 127.0.0.1) into the initiator's and the target's events, moves the
// target's onto a clock 2 s ahead drifting 25 ppm, and joins them: every
// request is joined, the offset is found within its bound, and the
// target's own stage is exact.
func TestJoinRealTrace(t *testing.T) {
	p, s := nvmePath(t)
	read := func() []event.Event {
		f := tracetext.OpenFiles([]string{"../testdata/nvme-tcp-read4k.txt.gz"}, p)
		defer f.Close()
		evs, err := Read(context.Background(), f, nil)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	evs := read()
	one, _ := Records(evs, analyzeOpts(p))
	const offset, drift = 2e9, 25e-6
	var initEvs, tgtEvs []event.Event
	for _, ev := range evs {
		if s.TargetKind(int(ev.Kind)) {
			ev.TS += int64(offset + drift*float64(ev.TS))
			tgtEvs = append(tgtEvs, ev)
		} else {
			initEvs = append(initEvs, ev)
		}
	}
	recs, _ := Records(initEvs, analyzeOpts(p))
	halves, inc := s.Halves(tgtEvs)
	res := s.Join(recs, halves, inc, Options{})
	if len(one) == 0 || res.Hosts.Join.Joined != int64(len(one)) {
		t.Fatalf("joined %+v, one host built %d records", res.Hosts.Join, len(one))
	}
	c := res.Hosts.Clock
	if want := offset + drift*float64(c.RefNS); math.Abs(c.OffsetNS-want) > c.ErrorBoundNS {
		t.Errorf("offset %.0f, true %.0f, bound %.0f", c.OffsetNS, want, c.ErrorBoundNS)
	}
	recv, done := p.EventIndex("TARGET_RECV"), p.EventIndex("TARGET_DONE")
	for i := range res.Joined {
		a, b := &res.Joined[i], &one[i]
		// The target's clock runs drift faster: its stage is longer by that.
		if d := float64(a.TS[done] - a.TS[recv] - (b.TS[done] - b.TS[recv])); math.Abs(d) > drift*float64(b.TS[done]-b.TS[recv])+1 {
			t.Fatalf("request %d: target stage %d ns joined, %d ns on one host", i, a.TS[done]-a.TS[recv], b.TS[done]-b.TS[recv])
		}
		if d := math.Abs(float64(a.TS[recv] - b.TS[recv])); d > c.ErrorBoundNS+1 {
			t.Fatalf("request %d: TARGET_RECV %.0f ns from its one-host time, bound %.0f", i, d, c.ErrorBoundNS)
		}
	}
	t.Logf("offset %.0f ns (true %.0f), bound %.0f ns, drift %.2f ppm, %d requests, shifted %d", c.OffsetNS, offset+drift*float64(c.RefNS), c.ErrorBoundNS, c.DriftPPM, c.Requests, res.Hosts.Join.Shifted)
}

// TestAnalyzePartial is the initiator's view when the peer could not be
// had: every request analyzed, the target's stages merged into one, and
// the reason carried to the report.
func TestAnalyzePartial(t *testing.T) {
	p, s := nvmePath(t)
	w := world{offset: 1e9, n: 500, queues: 1, qd: 4, seed: 9}
	initEvs, _ := w.events(p)
	agg, _, hosts, err := s.Analyze(context.Background(), initEvs, nil, "peer 169.254.0.2:7070: connection refused", analyzeOpts(p), Options{})
	if err != nil {
		t.Fatal(err)
	}
	prof := analyze.Summarize(agg, p, 1)
	Annotate(prof, hosts, p)
	if agg.Records() != int64(w.n) || hosts.Clock != nil || hosts.Partial == "" {
		t.Fatalf("records %d, hosts %+v", agg.Records(), hosts)
	}
	var names []string
	for _, st := range prof.Groups[0].Stages {
		names = append(names, st.Name)
	}
	if got := strings.Join(names, ","); got != "host-issue,send-net-recv+target-queue+target-device+resp-net-recv,host-complete" {
		t.Errorf("stages %s", got)
	}
	if len(prof.Warnings) == 0 || !strings.Contains(prof.Warnings[0], "target's stages partial: peer 169.254.0.2:7070") {
		t.Errorf("warnings %q", prof.Warnings)
	}
}

// TestJoinHint: a clock exchange's range keeps the coarse search inside
// it; a range that excludes the offset joins nothing and says so.
func TestJoinHint(t *testing.T) {
	p, s := nvmePath(t)
	w := world{offset: 42e9, n: 800, queues: 2, qd: 2, seed: 11}
	initEvs, tgtEvs := w.events(p)
	recs, _ := Records(initEvs, analyzeOpts(p))
	halves, inc := s.Halves(tgtEvs)
	right := [2]float64{42e9 - 1e6, 42e9 + 1e6}
	if res := s.Join(recs, halves, inc, Options{Hint: &right}); res.Hosts.Join.Joined != int64(w.n) {
		t.Errorf("hint around the offset: joined %+v", res.Hosts.Join)
	}
	wrong := [2]float64{-1e6, 1e6}
	res := s.Join(recs, halves, inc, Options{Hint: &wrong})
	if res.Hosts.Join.Joined != 0 || res.Hosts.Clock != nil || len(res.Hosts.Join.Unjoined) == 0 ||
		res.Hosts.Join.Unjoined[0].Reason != "no offset joins any of the target's requests with the initiator's" {
		t.Errorf("hint excluding the offset: %+v", res.Hosts.Join)
	}
}
