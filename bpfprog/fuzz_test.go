package bpfprog

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen reads arbitrary bytes as an object: it must return an object or
// an error, never panic, and every program it lists must load.
func FuzzOpen(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.o"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Open(bytes.NewReader(data), "fuzz.o")
		if err != nil {
			return
		}
		for _, e := range o.Entries {
			// Errors are fine (a corrupt map reference); panics are not.
			o.Program(Options{Program: e.Name})
		}
	})
}

// FuzzLegacyDefs decodes arbitrary "maps" sections with symbols at
// arbitrary offsets and sizes: errors, never panics, and every definition
// it returns lies inside the section.
func FuzzLegacyDefs(f *testing.F) {
	elfMap := make([]byte, 72)
	for i, v := range []uint32{1, 4, 8, 16, 0, 1, 2, 0, 0, 12, 4, 4, 2, 0, 0, 0, 1, 3} {
		binary.LittleEndian.PutUint32(elfMap[4*i:], v)
	}
	f.Add(elfMap, uint8(2), uint64(36), uint64(36))
	f.Add(elfMap[:40], uint8(2), uint64(0), uint64(20))
	f.Add(elfMap[:20], uint8(1), uint64(20), uint64(0))
	f.Add([]byte{}, uint8(1), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, n uint8, size, step uint64) {
		n = n%8 + 1
		syms := make([]elf.Symbol, n)
		for i := range syms {
			syms[i] = elf.Symbol{Name: string(rune('a' + i)), Value: uint64(i) * step, Size: size}
		}
		defs := map[string]*LegacyDef{}
		if err := readDefs(defs, "maps", data, syms, binary.LittleEndian); err != nil {
			return
		}
		for name, d := range defs {
			if d.Size < 20 || d.Size > len(data) {
				t.Errorf("map %s: definition of %d bytes in a section of %d", name, d.Size, len(data))
			}
		}
		linkInner(defs)
	})
}
