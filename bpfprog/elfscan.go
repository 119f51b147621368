package bpfprog

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// scan is what the loader needs from the ELF beyond what
// github.com/cilium/ebpf reports: the global functions of .text (candidate
// entry points the library keeps as subprograms only) and the definitions
// of the legacy "maps" sections.
type scan struct {
	// aliasTaken reports a section already called textAlias.
	aliasTaken bool
	// text is the executable .text section, nil when there is none.
	text *elf.Section
	// textGlobals are the global functions defined in .text, sorted.
	textGlobals []string
	// execSections counts executable sections holding code.
	execSections int
	// legacy holds the definitions of maps from "maps" sections, by name.
	legacy map[string]*LegacyDef
	// btfStrOff and btfStrLen locate the string table of .BTF in the
	// file, when the object has BTF.
	btfStrOff, btfStrLen int64
	// shstrOff is the file offset of the .text section's name.
	shstrOff int64
}

// scanELF reads r's sections and symbols with debug/elf. It never panics:
// a panic of the ELF reader on malformed input becomes an error.
func scanELF(r io.ReaderAt) (s *scan, err error) {
	defer func() {
		if v := recover(); v != nil {
			s, err = nil, fmt.Errorf("%w: malformed ELF (%v)", ErrNotBPF, v)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotBPF, err)
	}
	s = &scan{}
	for _, sec := range f.Sections {
		s.aliasTaken = s.aliasTaken || sec.Name == textAlias
		if sec.Type == elf.SHT_PROGBITS && sec.Flags&elf.SHF_EXECINSTR != 0 && sec.Size > 0 {
			s.execSections++
			if sec.Name == ".text" {
				s.text = sec
			}
		}
		if sec.Name == ".BTF" && sec.Type == elf.SHT_PROGBITS {
			s.btfStrOff, s.btfStrLen = btfStrings(sec, f.ByteOrder)
		}
	}
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("read symbols: %w", err)
	}
	if s.text != nil {
		s.textGlobals = textGlobals(f, s.text, syms)
		if len(s.textGlobals) > 0 {
			s.shstrOff = sectionNameOffset(r, f, s.text)
		}
	}
	if s.legacy, err = legacyMaps(f, syms); err != nil {
		return nil, err
	}
	return s, nil
}

// textGlobals lists the global and weak functions defined in section text.
func textGlobals(f *elf.File, text *elf.Section, syms []elf.Symbol) []string {
	var names []string
	for _, sym := range syms {
		if int(sym.Section) >= len(f.Sections) || f.Sections[sym.Section] != text || sym.Name == "" {
			continue
		}
		bind := elf.ST_BIND(sym.Info)
		if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && (bind == elf.STB_GLOBAL || bind == elf.STB_WEAK) {
			names = append(names, sym.Name)
		}
	}
	sort.Strings(names)
	return names
}

// sectionNameOffset returns the file offset of sec's name in the section
// header string table, or -1 when it cannot be located. debug/elf does not
// keep sh_name, so it is read from the section header table of the
// (64-bit) ELF file.
func sectionNameOffset(r io.ReaderAt, f *elf.File, sec *elf.Section) int64 {
	if f.Class != elf.ELFCLASS64 {
		return -1
	}
	i := -1
	for j, s := range f.Sections {
		if s == sec {
			i = j
		}
	}
	var hdr [64]byte
	if i < 0 {
		return -1
	}
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return -1
	}
	shoff, shentsize := f.ByteOrder.Uint64(hdr[0x28:]), uint64(f.ByteOrder.Uint16(hdr[0x3a:]))
	shstrndx := int(f.ByteOrder.Uint16(hdr[0x3e:]))
	var name [4]byte
	if shoff > 1<<40 || shentsize < 64 || shentsize > 1<<10 || shstrndx >= len(f.Sections) {
		return -1
	}
	if _, err := r.ReadAt(name[:], int64(shoff+uint64(i)*shentsize)); err != nil {
		return -1
	}
	shstr := f.Sections[shstrndx]
	off := uint64(f.ByteOrder.Uint32(name[:]))
	if off+uint64(len(".text")) >= shstr.Size || shstr.Offset > 1<<40 {
		return -1
	}
	return int64(shstr.Offset + off)
}

// btfStrings locates the string table of a .BTF section: the header holds
// magic (u16 0xeB9F), version, flags (u8 each), then u32 hdr_len, type_off,
// type_len, str_off, str_len; offsets count from the end of the header.
func btfStrings(sec *elf.Section, order binary.ByteOrder) (off, n int64) {
	var hdr [24]byte
	if _, err := sec.ReadAt(hdr[:], 0); err != nil || order.Uint16(hdr[0:]) != 0xeB9F {
		return 0, 0
	}
	hdrLen, strOff, strLen := uint64(order.Uint32(hdr[4:])), uint64(order.Uint32(hdr[16:])), uint64(order.Uint32(hdr[20:]))
	// debug/elf does not check section sizes against the file: a string
	// table larger than any compiler writes is taken for a corrupt one.
	if hdrLen+strOff+strLen > sec.Size || sec.Type == elf.SHT_NOBITS || strLen > 1<<26 {
		return 0, 0
	}
	return int64(sec.Offset + hdrLen + strOff), int64(strLen)
}

// textAlias is the name .text is loaded under when its global functions
// may be entry points: github.com/cilium/ebpf keeps functions of ".text"
// as subprograms only, and exposes those of every other code section. It
// has the length of ".text", so the section header and BTF string tables
// can be rewritten in place.
const textAlias = "_text"

// exposeText returns a view of r in which the .text section, and the
// section name in BTF's line and function information, are called
// textAlias; nil when the object holds no global function in .text.
func (s *scan) exposeText(r io.ReaderAt) (io.ReaderAt, error) {
	if s.text == nil || len(s.textGlobals) == 0 {
		return nil, nil
	}
	if s.aliasTaken {
		return nil, fmt.Errorf("a section is already called %s", textAlias)
	}
	if s.shstrOff < 0 {
		return nil, errors.New("locate the name of section .text")
	}
	var name [len(".text")]byte
	if _, err := r.ReadAt(name[:], s.shstrOff); err != nil || string(name[:]) != ".text" {
		return nil, errors.New("locate the name of section .text")
	}
	v := &patched{r: r}
	v.add(s.shstrOff, textAlias)
	if s.btfStrLen > 0 {
		strs := make([]byte, s.btfStrLen)
		if _, err := r.ReadAt(strs, s.btfStrOff); err != nil {
			return nil, fmt.Errorf("read BTF strings: %w", err)
		}
		for i := 0; ; {
			j := bytes.Index(strs[i:], []byte("\x00.text\x00"))
			if j < 0 {
				break
			}
			v.add(s.btfStrOff+int64(i+j+1), textAlias)
			i += j + len(".text") + 1
		}
	}
	return v, nil
}

// patched is a view of an io.ReaderAt with some byte ranges replaced.
type patched struct {
	r       io.ReaderAt
	patches []patch
}

type patch struct {
	off  int64
	data string
}

func (p *patched) add(off int64, data string) { p.patches = append(p.patches, patch{off, data}) }

// ReadAt reads from the underlying reader and overlays the patches.
func (p *patched) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.r.ReadAt(b, off)
	for _, pt := range p.patches {
		for i := 0; i < len(pt.data); i++ {
			if at := pt.off + int64(i) - off; at >= 0 && at < int64(n) {
				b[at] = pt.data[i]
			}
		}
	}
	return n, err
}

// isLegacyMapSection reports whether a section holds legacy map
// definitions, as github.com/cilium/ebpf decides it.
func isLegacyMapSection(name string) bool { return strings.HasPrefix(name, "maps") }
