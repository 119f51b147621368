package bpfprog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/internal/testobj"
)

func openBytes(t *testing.T, obj []byte) *Object {
	t.Helper()
	o, err := Open(bytes.NewReader(obj), "obj.o")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func names(o *Object) []string {
	var n []string
	for _, e := range o.Entries {
		n = append(n, e.Name)
	}
	return n
}

// TestTextEntry reads an entry point compiled without SEC(): the global
// function of .text nobody calls, not the global helper it calls nor its
// static one; line information survives.
func TestTextEntry(t *testing.T) {
	o, err := OpenFile(testobj.Built(t, "text_entry"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(o); !slices.Equal(got, []string{"text_entry"}) {
		t.Fatalf("candidates %v, want [text_entry]", got)
	}
	if len(o.Spec.Programs) != 1 {
		t.Errorf("spec holds %d programs, want the entry only", len(o.Spec.Programs))
	}
	e := o.Entries[0]
	if e.Section != ".text" || e.Type != ebpf.UnspecifiedProgram || e.Funcs != 3 || !slices.Equal(e.Maps, []string{"class_hits"}) {
		t.Errorf("entry %+v", e)
	}
	p, err := o.Program(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != ebpf.XDP || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "analysed as XDP") {
		t.Errorf("type %s, notes %q", p.Type, p.Notes)
	}
	if o.Spec.Programs["text_entry"].Type != ebpf.XDP {
		t.Errorf("spec program type %s, want XDP", o.Spec.Programs["text_entry"].Type)
	}
	var funcs []string
	for _, f := range p.Funcs {
		funcs = append(funcs, f.Name)
	}
	slices.Sort(funcs)
	if !slices.Equal(funcs, []string{"ether_class", "text_entry", "too_short"}) {
		t.Errorf("functions %v", funcs)
	}
	if loc, _ := p.Line(0); !strings.HasPrefix(loc, "text_entry.c:") {
		t.Errorf("line of instruction 0: %q, want text_entry.c:N", loc)
	}
	// A chosen type applies without a note.
	p, err = o.Program(Options{Type: ebpf.SchedCLS})
	if err != nil || p.Type != ebpf.SchedCLS || len(p.Notes) != 0 {
		t.Errorf("with --type tc: %v, %v, %q", err, p.Type, p.Notes)
	}
}

// TestTextNoBTF reads the plainest build: .text entry, no BTF, a struct
// bpf_map_def map.
func TestTextNoBTF(t *testing.T) {
	p, err := LoadFile(testobj.Built(t, "text_nobtf"), "")
	if err != nil {
		t.Fatal(err)
	}
	m := p.Maps["blocked_ports"]
	if p.Name != "text_nobtf" || p.Section != ".text" || m == nil {
		t.Fatalf("program %s in %s, maps %v", p.Name, p.Section, p.Maps)
	}
	if m.Definition() != "bpf_map_def" || m.Type != ebpf.Hash || m.KeySize != 2 || m.ValueSize != 1 || m.MaxEntries != 64 {
		t.Errorf("map %+v (%s)", m, m.Definition())
	}
}

// TestElfMap reads iproute2's layout: code in "prog", struct bpf_elf_map
// maps with id, pinning and an inner map given by id.
func TestElfMap(t *testing.T) {
	o, err := OpenFile(testobj.Built(t, "iproute2"))
	if err != nil {
		t.Fatal(err)
	}
	if e := o.Entries; len(e) != 1 || e[0].Section != "prog" || e[0].Type != ebpf.UnspecifiedProgram {
		t.Fatalf("entries %+v", e)
	}
	blocked, tables, verdicts := o.Maps["blocked"], o.Maps["tables"], o.Maps["verdicts"]
	if blocked == nil || tables == nil || verdicts == nil {
		t.Fatalf("maps %v", o.Maps)
	}
	if d := blocked.Legacy; d.Layout != "bpf_elf_map" || d.Size != 36 || d.ID != 1 || d.Pinning != 1 || blocked.Flags != 1 || blocked.MaxEntries != 1024 {
		t.Errorf("blocked: %+v, flags %d", d, blocked.Flags)
	}
	if verdicts.Legacy.Pinning != 2 || verdicts.Type != ebpf.PerCPUArray {
		t.Errorf("verdicts: %+v", verdicts.Legacy)
	}
	if tables.Inner != blocked || tables.Legacy.Inner != "blocked" || tables.Legacy.InnerIndex != 0 {
		t.Errorf("tables: inner %v, def %+v", tables.Inner, tables.Legacy)
	}
	ms := o.Spec.Maps["tables"]
	if ms.InnerMap == nil || ms.InnerMap.Type != ebpf.Hash || ms.Extra != nil {
		t.Errorf("spec of tables: inner %v, extra %v", ms.InnerMap, ms.Extra)
	}
	p, err := o.Program(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Maps["blocked"]; !ok || p.Type != ebpf.XDP {
		t.Errorf("program maps %v, type %s", p.Maps, p.Type)
	}
}

// TestSectionNames gives the code of iproute2's example the section names
// iproute2 and libbpf use.
func TestSectionNames(t *testing.T) {
	obj := readObj(t, filepath.Join("testdata", "iproute2_nobtf.o"))
	for _, c := range []struct {
		section string
		want    ebpf.ProgramType
	}{
		{"prog", ebpf.UnspecifiedProgram},
		{"classifier", ebpf.SchedCLS},
		{"action", ebpf.SchedACT},
		{"tc", ebpf.SchedCLS},
		{"xdp_drop", ebpf.XDP},
		{"xdp", ebpf.XDP},
		{"mycode", ebpf.UnspecifiedProgram},
		{"kprobe/x", ebpf.Kprobe},
	} {
		t.Run(c.section, func(t *testing.T) {
			o := openBytes(t, renameSection(t, obj, "prog", c.section))
			if len(o.Entries) != 1 || o.Entries[0].Section != c.section || o.Entries[0].Type != c.want {
				t.Errorf("entries %+v, want one of type %s", o.Entries, c.want)
			}
		})
	}
}

// TestUnchanged checks that objects whose programs all sit in SEC()
// sections list exactly the programs github.com/cilium/ebpf finds.
func TestUnchanged(t *testing.T) {
	for _, name := range []string{"call", "counter", "legacy", "flowtable", "test_xdp_noinline"} {
		path := testobj.Built(t, name)
		spec, err := ebpf.LoadCollectionSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		o, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := names(o), Names(spec); !slices.Equal(got, want) {
			t.Errorf("%s: candidates %v, want %v", name, got, want)
		}
	}
}

// TestChoose covers the errors of choosing a program.
func TestChoose(t *testing.T) {
	_, err := LoadFile(testobj.Built(t, "test_xdp_noinline"), "")
	if err == nil || fail.ExitCode(err) != 2 {
		t.Fatalf("ambiguous object: %v", err)
	}
	for _, want := range []string{"test_xdp_noinline.o", "holds 2 programs", "balancer_ingress_v4 (section xdp)", "balancer_ingress_v6 (section xdp)", "--program"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := LoadFile(testobj.Built(t, "text_entry"), "ether_class"); err == nil || !strings.Contains(err.Error(), `no program "ether_class"`) {
		t.Errorf("a called function as program: %v", err)
	}
	_, err = LoadFileWith(testobj.Built(t, "legacy"), Options{Type: ebpf.SchedCLS})
	if err == nil || !strings.Contains(err.Error(), "section xdp makes it XDP, not SchedCLS") {
		t.Errorf("contradicting --type: %v", err)
	}
}

// TestUnsupported checks that objects without a program say why.
func TestUnsupported(t *testing.T) {
	nobtf := readObj(t, filepath.Join("testdata", "text_nobtf.o"))
	for _, c := range []struct {
		name string
		obj  []byte
		want string
	}{
		{"no code", clearExec(t, nobtf, ".text"), "no section holds code"},
		{"static entry", makeLocal(t, nobtf, "text_nobtf"), ".text holds only static functions"},
		{"not ELF", []byte("int main() { return 0; }\n"), "not a BPF ELF object: no ELF header"},
		{"truncated", nobtf[:200], "not a BPF ELF object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(bytes.NewReader(c.obj), "obj.o")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "obj.o: ") || fail.ExitCode(err) != 2 {
				t.Errorf("error %v, want one naming obj.o and %q (exit 2)", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	if exe, err := os.Executable(); err == nil {
		if _, err := OpenFile(exe); !errors.Is(err, ErrNotBPF) || !strings.Contains(err.Error(), "not BPF") {
			t.Errorf("a host executable: %v", err)
		}
	}
}
