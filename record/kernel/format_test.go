package kernel

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/record/ctf"
)

func TestParseBlockRqIssue(t *testing.T) {
	text, err := os.ReadFile("testdata/block_rq_issue.format")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFormat(string(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{"dev", 8, 4, false, ctf.KindU32, false},
		{"sector", 16, 8, false, ctf.KindU64, false},
		{"nr_sector", 24, 4, false, ctf.KindU32, false},
		{"bytes", 28, 4, false, ctf.KindU32, false},
		{"ioprio", 32, 2, false, ctf.KindU16, false},
		{"rwbs", 34, 10, false, ctf.KindString, false},
		{"comm", 44, 16, false, ctf.KindString, false},
		{"cmd", 60, 4, false, ctf.KindString, true},
	}
	if f.ID == 0 || f.Size != 64 || !f.DataLoc || len(f.Fields) != len(want) {
		t.Fatalf("format %+v", f)
	}
	for i := range want {
		if f.Fields[i] != want[i] {
			t.Errorf("field %d = %+v, want %+v", i, f.Fields[i], want[i])
		}
	}
	// A record: sector 12345, 4096 bytes, rwbs "WS", comm "kworker", cmd "" at 64.
	rec := make([]byte, 80)
	le := binary.LittleEndian
	le.PutUint32(rec[8:], 259<<20|1)
	le.PutUint64(rec[16:], 12345)
	le.PutUint32(rec[24:], 8)
	le.PutUint32(rec[28:], 4096)
	copy(rec[34:], "WS")
	copy(rec[44:], "kworker/0:1H-kblockd") // longer than comm: cut at 16
	copy(rec[64:], "abc")
	le.PutUint32(rec[60:], 4<<16|64)
	f.Category, f.Name = "block", "block_rq_issue"
	c := f.Class(ctf.FirstCustomID)
	ev := ctf.AppendEventHeader(nil, c.ID, 1)
	ev = le.AppendUint32(ev, 7)
	ev = le.AppendUint32(ev, 8)
	ev = f.AppendFields(ev, rec)
	md := &ctf.Metadata{Classes: []ctf.EventClass{c}}
	parsed, err := ctf.ParseMetadata(md.Text())
	if err != nil {
		t.Fatal(err)
	}
	var events []ctf.Event
	events, err = decodeOne(parsed, ev)
	if err != nil {
		t.Fatal(err)
	}
	e := events[0]
	get := func(n string) ctf.Value {
		v, ok := e.Field(n)
		if !ok {
			t.Fatalf("no field %s", n)
		}
		return v
	}
	if e.Class.Name != "block:block_rq_issue" || get("sector").Uint != 12345 || get("bytes").Uint != 4096 || get("rwbs").Str != "WS" ||
		get("comm").Str != "kworker/0:1H-kbl" || get("cmd").Str != "abc" || get("tid").Uint != 7 || get("tgid").Uint != 8 {
		t.Errorf("decoded %+v", e.Values)
	}
}

func TestParseSchedSwitchSigned(t *testing.T) {
	text, _ := os.ReadFile("testdata/sched_switch.format")
	f, err := ParseFormat(string(text))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]ctf.Kind{}
	for _, fl := range f.Fields {
		kinds[fl.Name] = fl.Kind
	}
	if kinds["prev_comm"] != ctf.KindString || kinds["prev_pid"] != ctf.KindS32 || kinds["next_prio"] != ctf.KindS32 {
		t.Errorf("kinds %v", kinds)
	}
}

func TestParseFormatRejects(t *testing.T) {
	for _, text := range []string{"", "name: x\nID: 1\n", "ID: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"} {
		if _, err := ParseFormat(text); err == nil {
			t.Errorf("accepted %q", text)
		}
	}
	if _, err := ReadFormat("no_colon"); err == nil {
		t.Error("accepted a tracepoint name without category")
	}
	if _, err := ReadFormat("../x:y"); err == nil {
		t.Error("accepted a path in a tracepoint name")
	}
}

func FuzzParseFormat(f *testing.F) {
	for _, p := range []string{"testdata/block_rq_issue.format", "testdata/sched_switch.format"} {
		b, _ := os.ReadFile(p)
		f.Add(string(b), []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\xff\xff\xff\xff"))
	}
	f.Fuzz(func(t *testing.T, text string, rec []byte) {
		fm, err := ParseFormat(text)
		if err != nil {
			return
		}
		_ = fm.AppendFields(nil, rec) // must not panic on any record
	})
}

func TestClassRenamesClashes(t *testing.T) {
	f := &Format{Category: "c", Name: "n", Fields: []Field{{Name: "tid", Kind: ctf.KindU32, Size: 4}, {Name: "_tgid", Kind: ctf.KindU32, Size: 4}, {Name: "string", Kind: ctf.KindU8, Size: 1}}}
	c := f.Class(40)
	var names []string
	for _, fd := range c.Fields {
		names = append(names, fd.Name)
	}
	if got := strings.Join(names, " "); got != "tid tgid tp_tid tp_tgid _string" {
		t.Errorf("fields %s", got)
	}
}
