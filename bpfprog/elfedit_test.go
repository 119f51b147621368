package bpfprog

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"
)

// The helpers below edit a compiled object in memory, so that one small
// object can stand for the layouts others would have (other section names,
// no code, static entry points).

func readObj(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sectionHeader returns the file offset of section i's header.
func sectionHeader(t *testing.T, obj []byte, i int) int {
	t.Helper()
	shoff := binary.LittleEndian.Uint64(obj[0x28:])
	shentsize := binary.LittleEndian.Uint16(obj[0x3a:])
	return int(shoff) + i*int(shentsize)
}

func sectionIndex(t *testing.T, f *elf.File, name string) int {
	t.Helper()
	for i, s := range f.Sections {
		if s.Name == name {
			return i
		}
	}
	t.Fatalf("no section %s", name)
	return -1
}

// renameSection gives section from the name to, written over the name of
// .llvm_addrsig (which no reader of BPF objects looks at).
func renameSection(t *testing.T, obj []byte, from, to string) []byte {
	t.Helper()
	obj = bytes.Clone(obj)
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	const spare = ".llvm_addrsig"
	if len(to) > len(spare) {
		t.Fatalf("%q is longer than %q", to, spare)
	}
	shstrndx := int(binary.LittleEndian.Uint16(obj[0x3e:]))
	shstr := f.Sections[shstrndx]
	spareHdr := sectionHeader(t, obj, sectionIndex(t, f, spare))
	nameOff := binary.LittleEndian.Uint32(obj[spareHdr:])
	at := int(shstr.Offset) + int(nameOff)
	copy(obj[at:], to+"\x00")
	binary.LittleEndian.PutUint32(obj[sectionHeader(t, obj, sectionIndex(t, f, from)):], nameOff)
	return obj
}

// clearExec makes section name a non-executable one.
func clearExec(t *testing.T, obj []byte, name string) []byte {
	t.Helper()
	obj = bytes.Clone(obj)
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	h := sectionHeader(t, obj, sectionIndex(t, f, name)) + 8
	binary.LittleEndian.PutUint64(obj[h:], binary.LittleEndian.Uint64(obj[h:])&^uint64(elf.SHF_EXECINSTR))
	return obj
}

// makeLocal turns the global symbol name into a local one.
func makeLocal(t *testing.T, obj []byte, name string) []byte {
	t.Helper()
	obj = bytes.Clone(obj)
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	symtab := f.Sections[sectionIndex(t, f, ".symtab")]
	for i, s := range syms {
		if s.Name == name {
			at := int(symtab.Offset) + (i+1)*24 + 4 // Symbols skips entry 0
			obj[at] = byte(elf.ST_INFO(elf.STB_LOCAL, elf.ST_TYPE(s.Info)))
			return obj
		}
	}
	t.Fatalf("no symbol %s", name)
	return nil
}
