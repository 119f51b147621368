package mapstate

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/fail"
)

// testProg references one map of each kind the tests use.
func testProg(t testing.TB) *bpfprog.Program {
	t.Helper()
	maps := map[string]*bpfprog.Map{
		"hash":  {Name: "hash", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 16},
		"pcpu":  {Name: "pcpu", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 8},
		"arr":   {Name: "arr", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 4},
		"lpm":   {Name: "lpm", Type: ebpf.LPMTrie, KeySize: 8, ValueSize: 4, MaxEntries: 16, Flags: 1},
		"progs": {Name: "progs", Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 4},
	}
	var insns asm.Instructions
	for _, n := range []string{"hash", "pcpu", "arr", "lpm", "progs"} {
		insns = append(insns, asm.LoadMapPtr(asm.R1, 0).WithReference(n))
	}
	insns = append(insns, asm.Mov.Imm(asm.R0, 2), asm.Return())
	p, err := bpfprog.New("t", ebpf.XDP, insns, maps)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGood(t *testing.T) {
	p := testProg(t)
	s, err := ParseFile("testdata/good/mixed.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(p, "mixed.json"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Canonical(p).Write(&buf); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("testdata/good/mixed.canonical.json")
	if buf.String() != string(want) {
		t.Errorf("canonical form:\n%s\nwant:\n%s", buf.String(), want)
	}
	// The canonical form reads back to itself.
	back, err := Parse(&buf, "canonical")
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(p, s, back); len(d) != 0 {
		t.Errorf("round trip differs: %v", d)
	}
}

func TestBad(t *testing.T) {
	p := testProg(t)
	f, err := os.Open("testdata/bad/want.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		name, want, _ := strings.Cut(sc.Text(), "\t")
		n++
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata/bad", name+".json")
			s, err := ParseFile(path)
			if err == nil {
				err = s.Validate(p, path)
			}
			var ie *fail.InputError
			if !errors.As(err, &ie) || ie.File != path {
				t.Fatalf("error %v: want an input error about %s", err, path)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to contain %q", err, want)
			}
		})
	}
	files, _ := filepath.Glob("testdata/bad/*.json")
	if n != len(files) {
		t.Errorf("want.txt lists %d cases, testdata/bad holds %d files", n, len(files))
	}
}

func TestDiff(t *testing.T) {
	p := testProg(t)
	a, b := New(), New()
	a.Set("hash", Entry{Key: Hex{1, 0, 0, 0}, Value: make(Hex, 8)})
	b.Set("hash", Entry{Key: Hex{1, 0, 0, 0}, Value: Hex{1, 0, 0, 0, 0, 0, 0, 0}})
	b.Set("hash", Entry{Key: Hex{2, 0, 0, 0}, Value: make(Hex, 8)})
	a.Set("arr", Entry{Key: Hex{1, 0, 0, 0}, Value: make(Hex, 8)}) // zero array entry: no difference
	d := Diff(p, a, b)
	want := []string{
		"map hash: key 01000000: 0000000000000000 != 0100000000000000",
		"map hash: key 02000000 only on the right: 0000000000000000",
	}
	if strings.Join(d, "\n") != strings.Join(want, "\n") {
		t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
}

func TestOverlay(t *testing.T) {
	base, over := New(), New()
	base.Set("a", Entry{Key: Hex{0}, Value: Hex{1}})
	base.Set("b", Entry{Key: Hex{0}, Value: Hex{1}})
	over.Set("b", Entry{Key: Hex{1}, Value: Hex{2}})
	got := Overlay(base, over)
	if len(got.Maps["a"].Entries) != 1 || len(got.Maps["b"].Entries) != 1 || got.Maps["b"].Entries[0].Key[0] != 1 {
		t.Errorf("overlay: %+v", got.Maps)
	}
}
