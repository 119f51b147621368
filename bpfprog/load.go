package bpfprog

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// Program is one eBPF program of an object file, ready for analysis.
type Program struct {
	File    string           // the object file it came from
	Name    string           // program (function) name
	Section string           // ELF section, e.g. "xdp"
	Type    ebpf.ProgramType // program type from the section name
	Insns   asm.Instructions // flattened: entry function first, then callees
	Funcs   []Func           // functions in instruction order; Funcs[0] is the entry
	Maps    map[string]*Map  // maps referenced by the instructions, by name
	Offsets []asm.RawInstructionOffset
	Notes   []string // what a report should say about how the program was read
}

// Func is a contiguous run of Insns that forms one BPF function.
type Func struct {
	Name       string
	Start, End int // Insns[Start:End]
}

// Map describes a map the program references.
type Map struct {
	Name       string
	Type       ebpf.MapType
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	Flags      uint32
	Key, Value btf.Type   // nil when the object has no BTF for the map
	Inner      *Map       // for a map of maps, its inner map when the object gives one
	Legacy     *LegacyDef // the definition, for maps of a legacy "maps" section
}

// ErrNotBPF reports a file that is not a BPF ELF object.
var ErrNotBPF = errors.New("not a BPF ELF object")

// LoadFile reads the program called name from the object at path. An empty
// name selects the only program of the object.
func LoadFile(path, name string) (*Program, error) {
	return LoadFileWith(path, Options{Program: name})
}

// LoadFileWith reads the program opts choose from the object at path.
func LoadFileWith(path string, opts Options) (*Program, error) {
	o, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	return o.Program(opts)
}

// Load reads the program called name from the object in r; file names the
// object in errors. Every error it returns is an input error about file.
func Load(r io.ReaderAt, file, name string) (*Program, error) {
	o, err := Open(r, file)
	if err != nil {
		return nil, err
	}
	return o.Program(Options{Program: name})
}

// loadSpec parses the ELF, turning a panic of the ELF reader into an error.
func loadSpec(r io.ReaderAt) (spec *ebpf.CollectionSpec, err error) {
	var hdr [20]byte
	if n, _ := r.ReadAt(hdr[:], 0); n < len(hdr) || string(hdr[:4]) != "\x7fELF" {
		return nil, fmt.Errorf("%w: no ELF header", ErrNotBPF)
	}
	const emBPF = 247
	if m := uint16(hdr[18]) | uint16(hdr[19])<<8; hdr[5] == 1 && m != emBPF {
		return nil, fmt.Errorf("%w: ELF machine %d, not BPF (%d)", ErrNotBPF, m, emBPF)
	}
	defer func() {
		if v := recover(); v != nil {
			spec, err = nil, fmt.Errorf("%w: malformed ELF (%v)", ErrNotBPF, v)
		}
	}()
	spec, err = ebpf.LoadCollectionSpecFromReader(r)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: file ends early (%v)", ErrNotBPF, err)
		}
		msg := err.Error()
		if strings.Contains(msg, "bad magic") || strings.Contains(msg, "not an ELF") ||
			strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "invalid ELF") {
			return nil, fmt.Errorf("%w: %v", ErrNotBPF, err)
		}
		return nil, fmt.Errorf("load object: %w", err)
	}
	return spec, nil
}

// Names lists the programs in an object, sorted.
func Names(spec *ebpf.CollectionSpec) []string {
	var names []string
	for n := range spec.Programs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func specMaps(spec *ebpf.CollectionSpec) map[string]*Map {
	maps := map[string]*Map{}
	for name, ms := range spec.Maps {
		maps[name] = &Map{Name: name, Type: ms.Type, KeySize: ms.KeySize, ValueSize: ms.ValueSize,
			MaxEntries: ms.MaxEntries, Flags: ms.Flags, Key: ms.Key, Value: ms.Value}
	}
	for name, ms := range spec.Maps {
		if ms.InnerMap != nil {
			inner := *ms.InnerMap
			maps[name].Inner = &Map{Name: inner.Name, Type: inner.Type, KeySize: inner.KeySize, ValueSize: inner.ValueSize,
				MaxEntries: inner.MaxEntries, Flags: inner.Flags, Key: inner.Key, Value: inner.Value}
		}
	}
	return maps
}

// New builds a program from instructions, for programs assembled in Go
// rather than read from an object. maps describes the maps the
// instructions reference by name. Instructions and maps are checked as
// the kernel checks them before it loads a program (an *InvalidError).
func New(name string, typ ebpf.ProgramType, insns asm.Instructions, maps map[string]*Map) (*Program, error) {
	if len(insns) == 0 {
		return nil, fmt.Errorf("program %s has no instructions", name)
	}
	p := &Program{File: name, Name: name, Type: typ, Insns: insns, Maps: map[string]*Map{}}
	if err := p.index(maps); err != nil {
		return nil, fmt.Errorf("program %s: %w", name, err)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// index splits the instructions into functions, records raw offsets and
// resolves map references.
func (p *Program) index(maps map[string]*Map) error {
	var off asm.RawInstructionOffset
	p.Offsets = make([]asm.RawInstructionOffset, len(p.Insns))
	for i, ins := range p.Insns {
		p.Offsets[i] = off
		off += asm.RawInstructionOffset(ins.Size() / asm.InstructionSize)
		if sym := ins.Symbol(); sym != "" || i == 0 {
			if sym == "" {
				sym = p.Name
			}
			if n := len(p.Funcs); n > 0 {
				p.Funcs[n-1].End = i
			}
			p.Funcs = append(p.Funcs, Func{Name: sym, Start: i})
		}
		if ref := ins.Reference(); ref != "" && ins.IsLoadFromMap() {
			m, ok := maps[ref]
			if !ok {
				return fmt.Errorf("instruction %d references unknown map %q", i, ref)
			}
			p.Maps[ref] = m
		}
	}
	p.Funcs[len(p.Funcs)-1].End = len(p.Insns)
	return nil
}

// JumpTarget returns the index of the instruction the jump at i lands on
// (its offset counts raw 8-byte slots; a 32-bit JA carries it in imm).
// raw is the slot it names; ok is false when no instruction starts there:
// outside the program, or the second half of a 64-bit immediate load.
func (p *Program) JumpTarget(i int) (t int, raw int64, ok bool) {
	ins := p.Insns[i]
	off := int64(ins.Offset)
	if ins.OpCode.Class() == asm.Jump32Class && ins.OpCode.JumpOp() == asm.Ja {
		off = ins.Constant
	}
	raw = int64(p.Offsets[i]) + 1 + off
	t = sort.Search(len(p.Offsets), func(k int) bool { return int64(p.Offsets[k]) >= raw })
	return t, raw, t < len(p.Offsets) && int64(p.Offsets[t]) == raw
}

// FuncOf returns the index in Funcs of the function holding instruction i.
func (p *Program) FuncOf(i int) int {
	return sort.Search(len(p.Funcs), func(f int) bool { return p.Funcs[f].End > i })
}

// FuncByName returns the index in Funcs of the named function, or -1.
func (p *Program) FuncByName(name string) int {
	for i, f := range p.Funcs {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Line returns the source location and text of instruction i as
// "file.c:12", "text", or empty strings without line information.
func (p *Program) Line(i int) (loc, text string) {
	for j := i; j >= 0; j-- {
		src := p.Insns[j].Source()
		if src == nil {
			continue
		}
		if l, ok := src.(*btf.Line); ok {
			if l.LineNumber() == 0 {
				continue // compiler-generated: belongs to the line before
			}
			file := l.FileName()
			if k := strings.LastIndexByte(file, '/'); k >= 0 {
				file = file[k+1:]
			}
			return fmt.Sprintf("%s:%d", file, l.LineNumber()), strings.TrimSpace(l.Line())
		}
		return "", strings.TrimSpace(src.String())
	}
	return "", ""
}

// MapNames lists the names of maps, sorted.
func MapNames(maps map[string]*Map) []string {
	names := make([]string, 0, len(maps))
	for n := range maps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Definition says where the object defines m: "btf" (a .maps section),
// "bpf_map_def" or "bpf_elf_map" (a legacy "maps" section), or "data" (a
// global data section such as .rodata or .bss).
func (m *Map) Definition() string {
	switch {
	case m.Legacy != nil:
		return m.Legacy.Layout
	case strings.HasPrefix(m.Name, "."):
		return "data"
	}
	return "btf"
}
