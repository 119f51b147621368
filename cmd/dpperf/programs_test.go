package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
)

// TestProgramsTable lists the examples whose entry points sit in .text
// and in iproute2's "prog" section.
func TestProgramsTable(t *testing.T) {
	for _, c := range []struct{ obj, row string }{
		{"text_entry", "text_entry  .text    XDP (default)  43     3      class_hits"},
		{"text_nobtf", "text_nobtf  .text    XDP (default)  27     1      blocked_ports"},
		{"iproute2", "iproute2_xdp  prog     XDP (default)  53     1      blocked,verdicts"},
		{"call", "call_filter  xdp      XDP   "},
	} {
		t.Run(c.obj, func(t *testing.T) {
			out, errs, code := dpperf(t, "programs", built(t, c.obj))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "PROGRAM ") || !strings.HasPrefix(lines[1], c.row) {
				t.Errorf("got\n%s\nwant a header and a row starting %q", out, c.row)
			}
			// bound --list prints the same.
			if list, _, _ := dpperf(t, "bound", "--list", built(t, c.obj)); list != out {
				t.Errorf("bound --list:\n%s\nprograms:\n%s", list, out)
			}
		})
	}
}

// TestProgramsJSON checks the document bpfprog/programs.md describes on
// the iproute2 example: bpf_elf_map fields and the inner map by id.
func TestProgramsJSON(t *testing.T) {
	out, errs, code := dpperf(t, "programs", "--json", built(t, "iproute2"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc bpfprog.List
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Programs) != 1 {
		t.Fatalf("programs %+v", doc.Programs)
	}
	p := doc.Programs[0]
	if p.Name != "iproute2_xdp" || p.Section != "prog" || p.Type != "XDP" || p.TypeFrom != "default" || p.Insns != 53 || len(p.Maps) != 2 {
		t.Errorf("program %+v", p)
	}
	maps := map[string]bpfprog.MapEntry{}
	for _, m := range doc.Maps {
		maps[m.Name] = m
	}
	b, tab, v := maps["blocked"], maps["tables"], maps["verdicts"]
	if b.Definition != "bpf_elf_map" || b.ELFMap == nil || b.ELFMap.ID != 1 || b.ELFMap.Pinning != 1 || b.Flags != 1 || b.Type != "Hash" {
		t.Errorf("blocked: %+v", b)
	}
	if tab.Inner != "blocked" || tab.ELFMap == nil || tab.ELFMap.InnerID != 1 || tab.Type != "ArrayOfMaps" {
		t.Errorf("tables: %+v", tab)
	}
	if v.ELFMap == nil || v.ELFMap.Pinning != 2 {
		t.Errorf("verdicts: %+v", v)
	}
	// A BTF map and a bpf_map_def one.
	out, _, _ = dpperf(t, "programs", "--json", built(t, "text_entry"))
	if !strings.Contains(out, `"definition": "btf"`) || !strings.Contains(out, `"type_from": "default"`) {
		t.Errorf("text_entry:\n%s", out)
	}
	out, _, _ = dpperf(t, "programs", "--json", built(t, "legacy"))
	if !strings.Contains(out, `"definition": "bpf_map_def"`) || !strings.Contains(out, `"type_from": "section"`) {
		t.Errorf("legacy:\n%s", out)
	}
}

// TestProgramsErrors: one line naming the file and the reason, exit 2.
func TestProgramsErrors(t *testing.T) {
	text := filepath.Join(t.TempDir(), "notes.o")
	if err := os.WriteFile(text, []byte("not an object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"programs", text}, text + ": not a BPF ELF object: no ELF header"},
		{[]string{"programs", "missing.o"}, "missing.o: read object: no such file or directory"},
		{[]string{"bound", "--naive", "--target", "x86-64", built(t, "test_xdp_noinline")},
			"holds 2 programs: balancer_ingress_v4 (section xdp), balancer_ingress_v6 (section xdp); choose one with --program"},
		{[]string{"bound", "--naive", "--type", "tc", built(t, "legacy")}, "section xdp makes it XDP, not SchedCLS"},
		{[]string{"bound", "--type", "kprobe", built(t, "legacy")}, "want xdp or tc"},
		{[]string{"programs"}, "want one object file"},
	} {
		_, errs, code := dpperf(t, c.args...)
		last := strings.TrimSpace(errs)
		if i := strings.LastIndex(last, "\n"); i >= 0 {
			last = last[i+1:]
		}
		if code != 2 || !strings.Contains(last, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, last, c.want)
		}
	}
}

// TestBoundLegacyLayouts bounds the new examples end to end: the search,
// the kernel replay of the example packet (verdict and path), and the note
// on the type.
func TestBoundLegacyLayouts(t *testing.T) {
	for _, name := range []string{"text_entry", "text_nobtf", "iproute2"} {
		t.Run(name, func(t *testing.T) {
			args := []string{"bound", "--json", "--workers", "1", "--target", "x86-64", built(t, name)}
			if os.Geteuid() == 0 {
				args = append(args, "--measure")
			}
			out, errs, code := dpperf(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var r bound.Result
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if r.Kind != "ssp" || r.Program.Type != "XDP" || r.Bound.PacketRate <= 0 {
				t.Errorf("kind %s, type %s, bound %g", r.Kind, r.Program.Type, r.Bound.PacketRate)
			}
			if !strings.Contains(strings.Join(r.Notes, "\n"), "names no program type: analysed as XDP") {
				t.Errorf("notes %q lack the type note", r.Notes)
			}
			if m := r.Paths[0].Measured; m != nil && (!m.VerdictMatches || !m.PathMatches) {
				t.Errorf("replay: verdict match %v, path match %v %s", m.VerdictMatches, m.PathMatches, m.Mismatch)
			}
		})
	}
	// --type xdp says what the section does not: no note.
	out, errs, code := dpperf(t, "bound", "--naive", "--json", "--type", "xdp", "--target", "x86-64", built(t, "iproute2"))
	if code != 0 || strings.Contains(out, "names no program type") {
		t.Errorf("--type xdp: exit %d %s\n%s", code, errs, out)
	}
}

// TestInterfaceTextEntry: the interface command reads .text entries too.
func TestInterfaceTextEntry(t *testing.T) {
	out, errs, code := dpperf(t, "interface", "--workers", "1", built(t, "text_nobtf"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "text_nobtf") {
		t.Errorf("interface output does not name the program:\n%s", out)
	}
}
