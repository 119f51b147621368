package collect

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/internal/bpftest"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

func TestParseFetchArg(t *testing.T) {
	good := []struct {
		in   string
		want fetchArg
	}{
		{"+24(+16($arg1)):u16", fetchArg{Arg: 1, Offs: []int32{16, 24}, Size: 2}},
		{"+2(+0($arg1)):u16", fetchArg{Arg: 1, Offs: []int32{0, 2}, Size: 2}},
		{"$arg3", fetchArg{Arg: 3, Size: 8}},
		{"$arg2:x32", fetchArg{Arg: 2, Size: 4}},
		{"-8($arg1):s8", fetchArg{Arg: 1, Offs: []int32{-8}, Size: 1}},
		{"+0x10(+8(+0(+0($arg1)))):u64", fetchArg{Arg: 1, Offs: []int32{0, 0, 8, 16}, Size: 8}},
	}
	for _, g := range good {
		got, err := parseFetchArg(g.in)
		if err != nil || !reflect.DeepEqual(got, g.want) {
			t.Errorf("parseFetchArg(%q) = %+v, %v; want %+v", g.in, got, err, g.want)
		}
	}
	for _, bad := range []string{"", "%di", "+8(%di)", "$arg0", "$arg9", "+8($arg1", "+x($arg1)", "$arg1:string",
		"$arg1:u12", "$stack0", "+0(+0(+0(+0(+0($arg1)))))"} {
		if _, err := parseFetchArg(bad); err == nil {
			t.Errorf("parseFetchArg(%q) accepted", bad)
		}
	}
}

func FuzzFetchArg(f *testing.F) {
	f.Add("+24(+16($arg1)):u16")
	f.Add("$arg2:x32")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseFetchArg(s)
		if err != nil {
			return
		}
		if a.Arg < 1 || a.Arg > 8 || len(a.Offs) > maxDeref || (a.Size != 1 && a.Size != 2 && a.Size != 4 && a.Size != 8) {
			t.Errorf("parseFetchArg(%q) = %+v", s, a)
		}
	})
}

// Field offsets of the tracepoints in Debian's 6.1 kernel, as its tracefs
// format files give them (scripts/e2e/nvme-tcp-qemu.sh writes them to build/nvme-tcp/guest-info.txt).
var formats61 = map[string]map[string]uint32{
	"nvme:nvme_setup_cmd":      {"ctrl_id": 40, "qid": 44, "opcode": 48, "cid": 52},
	"nvme:nvme_complete_rq":    {"ctrl_id": 40, "qid": 44, "cid": 48},
	"nvmet:nvmet_req_init":     {"ctrl_id": 16, "qid": 52, "cid": 56, "opcode": 58},
	"nvmet:nvmet_req_complete": {"ctrl_id": 8, "qid": 44, "cid": 48},
	"block:block_rq_issue":     {"dev": 8, "sector": 16, "nr_sector": 24, "bytes": 28, "rwbs": 32},
	"block:block_rq_complete":  {"dev": 8, "sector": 16, "nr_sector": 24, "error": 28, "rwbs": 32},
}

func fakeFormat(sys, name string) (map[string]uint32, error) {
	if f, ok := formats61[sys+":"+name]; ok {
		return f, nil
	}
	return nil, errors.New("absent")
}

func withKprobes(*path.Event, []string) (bool, string) { return true, "" }

// plan61 plans the nvme-tcp path for a 6.1 kernel with kprobes.
func plan61(t *testing.T) (*path.Path, *nvmeSetup) {
	t.Helper()
	p, err := path.Builtin("nvme-tcp")
	if err != nil {
		t.Fatal(err)
	}
	s, err := planNVMe(p, fakeFormat, withKprobes)
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

// The built-in nvme-tcp path maps onto bpf/nvme.c: NVMe events keyed by
// (qid, cid), block events by (dev, sector), BLK_ISSUE joining QUEUE_RQ,
// the kprobe's fetch arguments decoded for this machine.
func TestPlanNVMe(t *testing.T) {
	p, s := plan61(t)
	idx := func(name string) uint8 { return uint8(p.EventIndex(name)) }
	wantKinds := [nvmeTPs]uint8{idx("QUEUE_RQ"), idx("HOST_CQE"), idx("TARGET_RECV"), idx("TARGET_DONE"), idx("BLK_ISSUE"), idx("BLK_COMPLETE"), idx("TARGET_EXEC")}
	if s.kinds != wantKinds {
		t.Errorf("kinds %v, want %v", s.kinds, wantKinds)
	}
	if s.spaces != [nvmeTPs]uint8{1, 1, 1, 1, 0, 0, 1} || s.joins != [nvmeTPs]uint8{0, 0, 0, 0, 1, 0, 0} || s.joinKind != idx("QUEUE_RQ") {
		t.Errorf("spaces %v joins %v join kind %d", s.spaces, s.joins, s.joinKind)
	}
	if s.first != 0 || int(s.last) != len(p.Events)-1 {
		t.Errorf("first %d last %d", s.first, s.last)
	}
	if l := s.layouts[0]; l.Qid != 44 || l.Cid != 52 || l.Opcode != 48 || l.Dev != noField {
		t.Errorf("nvme_setup_cmd layout %+v", l)
	}
	if l := s.layouts[5]; l.Dev != 8 || l.Bytes != noField || l.Rwbs != 32 {
		t.Errorf("block_rq_complete layout %+v", l)
	}
	if regs := argRegs[runtime.GOARCH]; regs != nil {
		want := nvmeFetch{Reg: regs[0], N: 2, Size: 2, Off: [4]int32{16, 24}}
		if s.fetch["qid"] != want {
			t.Errorf("qid fetch %+v, want %+v", s.fetch["qid"], want)
		}
	}
	for _, st := range s.status {
		if !st.Attached {
			t.Errorf("%s not attached: %s", st.Name, st.Reason)
		}
	}

	// Without kprobes and without the nvmet module, the target events
	// are reported, not attached.
	noTarget := func(sys, name string) (map[string]uint32, error) {
		if sys == "nvmet" {
			return nil, errors.New("absent")
		}
		return fakeFormat(sys, name)
	}
	s, err := planNVMe(p, noTarget, func(*path.Event, []string) (bool, string) { return false, "no kprobes" })
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range s.status {
		want := st.Name != "TARGET_RECV" && st.Name != "TARGET_EXEC" && st.Name != "TARGET_DONE"
		if st.Attached != want || (!want && st.Reason == "") {
			t.Errorf("status %+v", st)
		}
	}
	if s.kinds[nvmeKprobeTP] != noKind || s.kinds[2] != noKind {
		t.Errorf("kinds %v", s.kinds)
	}

	// Block events the programs do not handle send the user to tracefs.
	b, _ := path.Builtin("block")
	if _, err := planNVMe(b, fakeFormat, withKprobes); err == nil {
		t.Error("block_bio_queue accepted")
	}
}

// The decoder agrees with the Go struct bpf2go generated from struct
// nvme_event.
func TestDecodeNVMeRecord(t *testing.T) {
	rec := nvmeNvmeEvent{Ts: [7]uint64{100, 500, 200, 400, 110, 510, 300}, Sector: 8, Dev: 259 << 20, Bytes: 4096, Qid: 2, Cid: 25, Cpu: 1, Op: 1}
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, rec); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != nvmeRecordLen {
		t.Fatalf("record is %d bytes, want %d", buf.Len(), nvmeRecordLen)
	}
	// nvme-tcp: QUEUE_RQ=0 BLK_ISSUE=1 TARGET_RECV=2 TARGET_EXEC=3 TARGET_DONE=4 HOST_CQE=5 BLK_COMPLETE=6
	kinds := [nvmeTPs]uint8{0, 5, 2, 4, 1, 6, 3}
	d := &decoder{&nvmeRecord, kinds[:]}
	evs := d.events(buf.Bytes(), nil)
	if len(evs) != 7 {
		t.Fatalf("events %+v", evs)
	}
	wantTS := []int64{100, 110, 200, 300, 400, 500, 510}
	for i, e := range evs {
		if int(e.Kind) != i || e.TS != wantTS[i] || e.QID != 2 || e.CID != 25 || e.Dev != event.MakeDev(259, 0) || e.Sector != 8 || e.Op != event.OpRead {
			t.Errorf("event %d = %+v", i, e)
		}
	}
	var r event.Record
	if !d.record(buf.Bytes(), &r) || r.TS[3] != 300 || r.TS[6] != 510 || r.Bytes != 4096 || r.CPU != 1 {
		t.Errorf("record %+v", r)
	}
	if d.record(buf.Bytes()[:60], &r) || len(d.events(buf.Bytes()[:60], nil)) != 0 {
		t.Error("short record decoded")
	}
}

// The kernel's verifier accepts every program of bpf/nvme.c with the
// nvme-tcp path's constants. This machine may lack the nvme modules and
// kprobes, so nothing is attached; loading needs no tracepoint.
func TestNVMeProgramsLoad(t *testing.T) {
	needRootOrSkip(t)
	p, s := plan61(t)
	spec, err := nvmeSpec(s, Config{Path: p, Dev: event.MakeDev(259, 0), Sample: 2, HasOp: true, Op: event.OpRead, MinBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Programs) != 7 {
		t.Fatalf("programs %d, want 7", len(spec.Programs))
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var progs []*ebpf.Program
	for _, pr := range coll.Programs {
		progs = append(progs, pr)
	}
	ids := bpftest.IDs(t, progs...)
	coll.Close()
	if left := bpftest.StillLoaded(ids); len(left) > 0 {
		t.Errorf("programs %v still loaded", left)
	}
}

func needRootOrSkip(t *testing.T) {
	t.Helper()
	if err := needRoot(); err != nil {
		t.Skip(err)
	}
}

// driveAndBlock is a path of the two block events bpf/nvme.c handles,
// keyed by (dev, sector): it runs the NVMe programs' record keeping on
// any disk.
const driveAndBlock = `
name: issue-complete
key: [dev, sector]
events:
  - {name: D, tracepoint: "block:block_rq_issue"}
  - {name: C, tracepoint: "block:block_rq_complete"}
stages:
  - {name: D2C, from: D, to: C, queue: split-fcfs, cause: device}
`

// On this machine's loop device the NVMe programs (records, filter,
// ring buffer) must see what the block programs see.
func TestNVMeProgramsLoopDevice(t *testing.T) {
	needLive(t)
	p, err := path.Parse([]byte(driveAndBlock))
	if err != nil {
		t.Fatal(err)
	}
	dev := loopDevice(t, 32)
	d, _ := ResolveDev(dev)
	c, err := openNVMe(Config{Path: p, Dev: d, HasOp: true, Op: event.OpRead})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := collectorIDs(t, c)
	cmd := fio(dev, "4k", 2, 2000)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		c.Stop()
	}()
	a, st, err := analyze.Run(context.Background(), c, analyze.Options{Path: p, GroupBy: analyze.GroupBy{Type: true, Size: true}})
	if err != nil {
		t.Fatal(err)
	}
	pr := analyze.Summarize(a, p, 1)
	g := group(t, pr, "read 4KiB")
	if g.Requests < 500 || len(g.Stages) != 1 || g.Stages[0].Latency.MinNS <= 0 {
		t.Errorf("%d requests, stages %+v (build %+v)", g.Requests, g.Stages, st)
	}
	if len(pr.Groups) != 1 || c.Lost() != 0 {
		t.Errorf("groups %+v, lost %d", pr.Groups, c.Lost())
	}
	if c.Programs() != ProgramsTracepoint {
		t.Errorf("programs %s", c.Programs())
	}
	c.Close()
	if left := bpftest.StillLoaded(ids); len(left) > 0 {
		t.Errorf("programs %v still loaded after Close", left)
	}
}

// The kprobe program must read its fetch constants: clang once folded a
// copy of the whole (zero-initialized) volatile struct to zeros, and the
// program fetched nothing. The instructions must load the register
// offset, the number of loads, the size and the first offset of each.
func TestKprobeReadsFetchConstants(t *testing.T) {
	spec, err := loadNvme()
	if err != nil {
		t.Fatal(err)
	}
	read := rodataReads(spec.Programs["path_kprobe"].Instructions)
	for _, name := range []string{"kprobe_qid", "kprobe_cid", "kprobe_dev", "kprobe_sector"} {
		v := spec.Variables[name]
		if v == nil {
			t.Fatalf("no variable %s", name)
		}
		for _, field := range []struct {
			name string
			off  uint32
		}{{"reg", 0}, {"n", 2}, {"size", 3}, {"off[0]", 4}} {
			if !read[v.Offset+field.off] {
				t.Errorf("path_kprobe never reads %s.%s (.rodata+%d)", name, field.name, v.Offset+field.off)
			}
		}
	}
}

// rodataReads returns the .rodata offsets that insns load from: a
// register loaded with the address .rodata+X, then dereferenced at +Y,
// reads X+Y.
func rodataReads(insns asm.Instructions) map[uint32]bool {
	read := map[uint32]bool{}
	base := map[asm.Register]uint32{}
	for _, ins := range insns {
		switch {
		case ins.IsLoadFromMap() && ins.Reference() == ".rodata":
			base[ins.Dst] = uint32(uint64(ins.Constant) >> 32)
			continue
		case ins.OpCode.Class() == asm.LdXClass:
			if b, ok := base[ins.Src]; ok {
				read[b+uint32(ins.Offset)] = true
			}
		}
		delete(base, ins.Dst)
	}
	return read
}

func TestBPFHandles(t *testing.T) {
	for _, name := range []string{"block", "nvme-tcp"} {
		p, err := path.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if !BPFHandles(p) {
			t.Errorf("path %s not handled", name)
		}
	}
	tcp, err := path.Parse([]byte(`
name: tcp
key: [dev, sector]
events:
  - {name: A, tracepoint: "tcp:tcp_probe"}
  - {name: D, tracepoint: "block:block_rq_issue"}
stages:
  - {name: A2D, from: A, to: D, queue: central-ps, cause: network}
`))
	if err != nil {
		t.Fatal(err)
	}
	if BPFHandles(tcp) {
		t.Error("tcp:tcp_probe handled")
	}
}

// The tracefs collector stamps events with CLOCK_MONOTONIC, like the BPF
// programs.
func TestTraceFSMonoClock(t *testing.T) {
	needRootOrSkip(t)
	p, err := path.Builtin("block")
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenTraceFS(Config{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data, err := os.ReadFile(filepath.Join(c.dir, "trace_clock"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "[mono]") {
		t.Errorf("trace_clock %q", data)
	}
}
