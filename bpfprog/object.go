package bpfprog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/internal/fail"
)

// Object is a BPF ELF object with every entry point it holds: the programs
// of sections github.com/cilium/ebpf knows (libbpf's SEC() names and
// iproute2's legacy ones such as "prog", "classifier", "action", "xdp_*"),
// and the global functions of .text that no function calls, which the
// library otherwise keeps as subprograms only.
type Object struct {
	File    string
	Spec    *ebpf.CollectionSpec // Programs holds the entries (with their types set, see Program) and nothing else
	Entries []Entry              // the candidate programs, sorted by name
	Maps    map[string]*Map      // every map of the object, by name
}

// Entry is one candidate program of an object.
type Entry struct {
	Name    string
	Section string           // as named in the ELF, e.g. ".text" or "prog"
	Type    ebpf.ProgramType // from the section name; UnspecifiedProgram when it names none
	Insns   int              // instructions after flattening (a 16-byte load counts once)
	Funcs   int              // functions: the entry and the subprograms it calls
	Maps    []string         // maps the instructions reference, sorted
}

// Options choose a program of an object and its type.
type Options struct {
	Program string // entry name; empty selects the only candidate
	// Type applies when the section names no program type (.text, "prog",
	// or an unknown name); UnspecifiedProgram means XDP, with a note.
	Type ebpf.ProgramType
}

// OpenFile reads the object at path. Every error it returns is an input
// error about path.
func OpenFile(path string) (*Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail.Input(path, fmt.Errorf("read object: %w", errors.Unwrap(err)))
	}
	return Open(bytes.NewReader(data), path)
}

// Open reads the object in r; file names it in errors, which are input
// errors about file.
func Open(r io.ReaderAt, file string) (*Object, error) {
	o, err := open(r, file)
	if err != nil {
		return nil, fail.Input(file, err)
	}
	return o, nil
}

func open(r io.ReaderAt, file string) (*Object, error) {
	spec, err := loadSpec(r)
	if err != nil {
		return nil, err
	}
	s, err := scanELF(r)
	if err != nil {
		return nil, err
	}
	exposed := false
	if hiddenText(spec, s.textGlobals) {
		view, err := s.exposeText(r)
		if err != nil {
			return nil, fmt.Errorf("expose the functions of .text: %w", err)
		}
		if spec, err = loadSpec(view); err != nil {
			return nil, fmt.Errorf("with .text functions as programs: %w", err)
		}
		exposed = true
	}
	o := &Object{File: file, Spec: spec}
	o.entries(s.textGlobals, exposed)
	o.maps(s.legacy)
	if len(o.Entries) == 0 {
		return nil, noPrograms(s)
	}
	return o, nil
}

// hiddenText reports whether some global function of .text is in none of
// the programs spec exposes: an entry point the library kept hidden.
func hiddenText(spec *ebpf.CollectionSpec, globals []string) bool {
	seen := map[string]bool{}
	for _, ps := range spec.Programs {
		for _, ins := range ps.Instructions {
			if sym := ins.Symbol(); sym != "" {
				seen[sym] = true
			}
		}
	}
	for _, g := range globals {
		if !seen[g] {
			return true
		}
	}
	return false
}

// entries picks the candidates among the spec's programs: every program of
// a named section, and the global functions of .text that no function
// calls or takes the address of. Other functions of .text are dropped from
// Spec.Programs; they remain in the instructions of their callers.
func (o *Object) entries(textGlobals []string, exposed bool) {
	called := map[string]bool{}
	for _, ps := range o.Spec.Programs {
		for _, ins := range ps.Instructions {
			if ins.IsFunctionReference() {
				called[ins.Reference()] = true
			}
		}
	}
	global := map[string]bool{}
	for _, g := range textGlobals {
		global[g] = true
	}
	for name, ps := range o.Spec.Programs {
		if exposed && ps.SectionName == textAlias {
			if !global[name] || called[name] {
				delete(o.Spec.Programs, name)
				continue
			}
			ps.SectionName = ".text"
		}
	}
	for name, ps := range o.Spec.Programs {
		e := Entry{Name: name, Section: ps.SectionName, Type: ps.Type, Insns: len(ps.Instructions)}
		maps := map[string]bool{}
		for _, ins := range ps.Instructions {
			if ins.Symbol() != "" {
				e.Funcs++
			}
			if ref := ins.Reference(); ref != "" && ins.IsLoadFromMap() && o.Spec.Maps[ref] != nil {
				maps[ref] = true
			}
		}
		e.Funcs = max(e.Funcs, 1)
		for m := range maps {
			e.Maps = append(e.Maps, m)
		}
		sort.Strings(e.Maps)
		o.Entries = append(o.Entries, e)
	}
	sort.Slice(o.Entries, func(i, j int) bool { return o.Entries[i].Name < o.Entries[j].Name })
}

// maps describes every map of the spec, with the legacy definitions of
// maps from "maps" sections. Those definitions are what the file says
// about the extra fields, so the spec's maps no longer carry them as
// trailing bytes, and a map of maps gets the inner map its inner_id names.
func (o *Object) maps(legacy map[string]*LegacyDef) {
	o.Maps = specMaps(o.Spec)
	for name, d := range legacy {
		m, ms := o.Maps[name], o.Spec.Maps[name]
		if m == nil || ms == nil {
			continue
		}
		m.Legacy = d
		ms.Extra = nil
		if d.Inner != "" {
			m.Inner = o.Maps[d.Inner]
			if ms.InnerMap == nil && o.Spec.Maps[d.Inner] != nil {
				ms.InnerMap = o.Spec.Maps[d.Inner].Copy()
			}
		}
	}
}

// noPrograms explains why an object holds no candidate program.
func noPrograms(s *scan) error {
	switch {
	case s.execSections == 0:
		return errors.New("object holds no programs: no section holds code")
	case s.text != nil && s.execSections == 1 && len(s.textGlobals) == 0:
		return errors.New("object holds no programs: .text holds only static functions, and no other section holds code (mark the entry point with SEC(\"xdp\") or make it global)")
	default:
		return errors.New("object holds no programs: every function is called by another one")
	}
}

// Entry returns the candidate called name, or nil.
func (o *Object) Entry(name string) *Entry {
	for i := range o.Entries {
		if o.Entries[i].Name == name {
			return &o.Entries[i]
		}
	}
	return nil
}

// list names the candidates with their sections, for errors.
func (o *Object) list() string {
	var b strings.Builder
	for i, e := range o.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (section %s)", e.Name, e.Section)
	}
	return b.String()
}

// Program returns the candidate opts choose, ready for analysis. Its type
// is the section's, or opts.Type, or XDP with a note when neither says;
// the type is also set on the program in Spec.
func (o *Object) Program(opts Options) (*Program, error) {
	p, err := o.program(opts)
	if err != nil {
		return nil, fail.Input(o.File, err)
	}
	return p, nil
}

func (o *Object) program(opts Options) (*Program, error) {
	name := opts.Program
	if name == "" {
		if len(o.Entries) > 1 {
			return nil, fmt.Errorf("object holds %d programs: %s; choose one with --program", len(o.Entries), o.list())
		}
		name = o.Entries[0].Name
	}
	e := o.Entry(name)
	if e == nil {
		return nil, fmt.Errorf("no program %q in object (programs: %s)", name, o.list())
	}
	ps := o.Spec.Programs[name]
	if len(ps.Instructions) == 0 {
		return nil, fmt.Errorf("program %q has no instructions", name)
	}
	p := &Program{File: o.File, Name: name, Section: e.Section, Type: e.Type, Insns: ps.Instructions, Maps: map[string]*Map{}}
	switch {
	case e.Type != ebpf.UnspecifiedProgram && opts.Type != ebpf.UnspecifiedProgram && opts.Type != e.Type:
		return nil, fmt.Errorf("program %s: section %s makes it %s, not %s", name, e.Section, e.Type, opts.Type)
	case e.Type == ebpf.UnspecifiedProgram && opts.Type != ebpf.UnspecifiedProgram:
		p.Type = opts.Type
	case e.Type == ebpf.UnspecifiedProgram:
		p.Type = ebpf.XDP
		p.Notes = append(p.Notes, fmt.Sprintf("section %s names no program type: analysed as XDP (choose with --type xdp|tc)", e.Section))
	}
	ps.Type = p.Type
	if err := p.index(o.Maps); err != nil {
		return nil, fmt.Errorf("program %s: %w", p.Name, err)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// SpecFile reads the object at path as github.com/cilium/ebpf lays it out,
// with the entry points Object finds as its programs (for loading into the
// kernel). A program p read from the object has the type p.Type there.
func SpecFile(p *Program) (*ebpf.CollectionSpec, error) {
	o, err := OpenFile(p.File)
	if err != nil {
		return nil, err
	}
	if ps := o.Spec.Programs[p.Name]; ps != nil && ps.Type == ebpf.UnspecifiedProgram {
		ps.Type = p.Type
	}
	return o.Spec, nil
}

// XDPPrograms reads every program of the object at path that runs as XDP:
// those of XDP sections and those whose section names no type.
func XDPPrograms(path string) ([]*Program, error) {
	o, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	var ps []*Program
	for _, e := range o.Entries {
		if e.Type != ebpf.XDP && e.Type != ebpf.UnspecifiedProgram {
			continue
		}
		p, err := o.Program(Options{Program: e.Name, Type: ebpf.XDP})
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}
