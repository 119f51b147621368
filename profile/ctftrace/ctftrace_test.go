package ctftrace

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
	"github.com/dpperf/dpperf/record/ctf"
)

// Event classes as record/kernel declares them for Linux 6.18 (tid and
// tgid, then the tracepoint's fields).
var classes = []ctf.EventClass{
	{ID: 32, Name: "block:block_bio_queue", Fields: fields("dev", ctf.KindU32, "sector", ctf.KindU64, "nr_sector", ctf.KindU32, "rwbs", ctf.KindString, "comm", ctf.KindString)},
	{ID: 33, Name: "block:block_getrq", Fields: fields("dev", ctf.KindU32, "sector", ctf.KindU64, "nr_sector", ctf.KindU32, "rwbs", ctf.KindString, "comm", ctf.KindString)},
	{ID: 34, Name: "block:block_rq_issue", Fields: fields("dev", ctf.KindU32, "sector", ctf.KindU64, "nr_sector", ctf.KindU32, "bytes", ctf.KindU32, "ioprio", ctf.KindU16, "rwbs", ctf.KindString, "comm", ctf.KindString, "cmd", ctf.KindString)},
	{ID: 35, Name: "block:block_rq_complete", Fields: fields("dev", ctf.KindU32, "sector", ctf.KindU64, "nr_sector", ctf.KindU32, "error", ctf.KindS32, "ioprio", ctf.KindU16, "rwbs", ctf.KindString, "cmd", ctf.KindString)},
	{ID: 36, Name: "sched:sched_switch", Fields: fields("prev_pid", ctf.KindS32)},
	{ID: 37, Name: "nvme:nvme_setup_cmd", Fields: fields("disk", ctf.KindString, "ctrl_id", ctf.KindS32, "qid", ctf.KindS32, "opcode", ctf.KindU8, "flags", ctf.KindU8, "fctype", ctf.KindU8, "cid", ctf.KindU16, "nsid", ctf.KindU32)},
}

func fields(nameKind ...any) []ctf.FieldDecl {
	out := []ctf.FieldDecl{{Name: "tid", Kind: ctf.KindU32}, {Name: "tgid", Kind: ctf.KindU32}}
	for i := 0; i < len(nameKind); i += 2 {
		out = append(out, ctf.FieldDecl{Name: nameKind[i].(string), Kind: nameKind[i+1].(ctf.Kind)})
	}
	return out
}

// enc appends one event of class id at ts with the given field values
// (after tid and tgid), encoded by the class's kinds.
func enc(b []byte, id uint8, ts uint64, vals ...any) []byte {
	b = ctf.AppendEventHeader(b, id, ts)
	b = binary.LittleEndian.AppendUint64(b, 0) // tid, tgid
	for _, v := range vals {
		switch v := v.(type) {
		case uint8:
			b = append(b, v)
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		case string:
			b = ctf.AppendString(b, v)
		}
	}
	return b
}

// writeTrace writes a kernel trace with the streams given as event bytes
// per CPU, one packet each, and returns the recording directory.
func writeTrace(t testing.TB, cpus ...[]byte) string {
	t.Helper()
	dir := t.TempDir()
	kdir := filepath.Join(dir, "2026-01-01T00-00-00.000", "kernel")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := ctf.Metadata{UUID: ctf.NewUUID(), Label: "kernel", Classes: classes}
	if err := os.WriteFile(filepath.Join(kdir, "metadata"), []byte(md.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	for cpu, evs := range cpus {
		var buf bytes.Buffer
		name := "cpu" + string(rune('0'+cpu))
		if err := ctf.NewStream(&buf, "kernel", name).WritePacket(0, 1<<40, uint64(cpu), evs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(kdir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const loop0 = 7 << 20

// Known answer: requests submitted on CPU 0 and completed on CPU 1 (the
// streams must be merged by time), with Q2G 1µs, G2D 2µs, D2C 50µs;
// another device's and an unused tracepoint's events in between.
func TestKnownAnswer(t *testing.T) {
	var cpu0, cpu1 []byte
	for i := uint64(0); i < 100; i++ {
		start, sector := 1_000_000+i*100_000, 1000+8*i
		cpu0 = enc(cpu0, 32, start, uint32(loop0), sector, uint32(8), "R", "fio")
		cpu0 = enc(cpu0, 36, start+500, int32(1))
		cpu0 = enc(cpu0, 33, start+1000, uint32(loop0), sector, uint32(8), "R", "fio")
		cpu0 = enc(cpu0, 34, start+3000, uint32(loop0), sector, uint32(8), uint32(4096), uint16(0), "R", "fio", "")
		cpu0 = enc(cpu0, 34, start+3500, uint32(254<<20), sector, uint32(8), uint32(4096), uint16(0), "W", "loop0", "")
		cpu1 = enc(cpu1, 35, start+53_000, uint32(loop0), sector, uint32(8), int32(0), uint16(0), "R", "")
	}
	p, err := path.Builtin("block")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Open(writeTrace(t, cpu0, cpu1), p)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	opt := analyze.Options{Path: p, GroupBy: analyze.GroupBy{Type: true, Size: true}, Filter: analyze.Filter{Dev: event.Dev(loop0)}}
	a, st, err := analyze.Run(context.Background(), tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 100 || st.Orphans != 100 || tr.Stats().Skipped != 100 || tr.Stats().Lost != 1 {
		t.Fatalf("build %+v, reader %+v", st, tr.Stats())
	}
	pr := analyze.Summarize(a, p, 1)
	if len(pr.Groups) != 1 || pr.Groups[0].Key != "read 4KiB" {
		t.Fatalf("groups %+v", pr.Groups)
	}
	want := map[string]float64{"Q2G": 1000, "G2I+I2D": 2000, "D2C": 50_000}
	for _, s := range pr.Groups[0].Stages {
		if s.Latency.MeanNS != want[s.Name] || s.Latency.Count != 100 {
			t.Errorf("stage %s: mean %v count %d, want %v", s.Name, s.Latency.MeanNS, s.Latency.Count, want[s.Name])
		}
	}
	seen := tr.Seen()
	if !seen[0] || !seen[1] || seen[2] || !seen[3] || !seen[4] {
		t.Errorf("seen %v", seen)
	}
}

func TestNVMeFields(t *testing.T) {
	evs := enc(nil, 37, 5000, "nvme0n1", int32(0), int32(3), uint8(2), uint8(0), uint8(0), uint16(41), uint32(1))
	p, err := path.Builtin("nvme-tcp")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Open(writeTrace(t, nil, evs), p)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ev, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if ev.QID != 3 || ev.CID != 41 || ev.Op != event.OpRead || ev.CPU != 1 || ev.TS != 5000 || int(ev.Kind) != p.EventIndex("QUEUE_RQ") {
		t.Errorf("event %+v", ev)
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("after the last event: %v", err)
	}
}

func TestNoTrace(t *testing.T) {
	p, _ := path.Builtin("block")
	if _, err := Open(t.TempDir(), p); err == nil {
		t.Error("empty directory accepted")
	}
}

// FuzzStream: any stream file either reads or fails with an error.
func FuzzStream(f *testing.F) {
	f.Add(enc(nil, 32, 100, uint32(loop0), uint64(8), uint32(8), "R", "fio"))
	f.Add(enc(enc(nil, 34, 100, uint32(loop0), uint64(8), uint32(8), uint32(4096), uint16(0), "R", "fio", ""), 37, 200, "d", int32(0), int32(-1), uint8(2), uint8(0), uint8(0), uint16(1), uint32(1)))
	f.Add([]byte{37, 1, 2})
	p, _ := path.Builtin("block")
	nv, _ := path.Builtin("nvme-tcp")
	f.Fuzz(func(t *testing.T, evs []byte) {
		dir := writeTrace(t, evs)
		for _, pp := range []*path.Path{p, nv} {
			tr, err := Open(dir, pp)
			if err != nil {
				continue
			}
			for i := 0; i < 1000; i++ {
				if _, err := tr.Next(); err != nil {
					break
				}
			}
			tr.Close()
		}
	})
}
