package bpfprog

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/cilium/ebpf"
)

// LegacyDef is a map definition from a legacy "maps" section: one struct
// per map symbol, laid out as
//
//	struct bpf_map_def {            struct bpf_elf_map {  (iproute2)
//	    u32 type;                       u32 type;
//	    u32 key_size;                   u32 size_key;
//	    u32 value_size;                 u32 size_value;
//	    u32 max_entries;                u32 max_elem;
//	    u32 map_flags;                  u32 flags;
//	    [u32 inner_map_idx;             u32 id;
//	     u32 numa_node;]                u32 pinning;
//	};                                  u32 inner_id;
//	                                    u32 inner_idx;
//	                                };
//
// Definitions of 20 to 28 bytes are read as bpf_map_def (the libbpf and
// kernel-samples variants), of 32 or more as bpf_elf_map.
type LegacyDef struct {
	Layout     string // "bpf_map_def" or "bpf_elf_map"
	Size       int    // bytes of one definition
	Type       ebpf.MapType
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	Flags      uint32
	// bpf_elf_map only: iproute2's id of the map, its pinning (0 none,
	// 1 object namespace, 2 global namespace), and for a map of maps the id
	// of its inner map and the slot that map is placed at.
	ID, Pinning, InnerID, InnerIndex uint32
	Inner                            string // the map InnerID names, for maps of maps
}

// legacyMaps reads the definitions of every "maps" section. The size of
// one definition is its symbol's size or, when symbols carry no size, the
// section's size divided by its number of map symbols (as iproute2 does).
func legacyMaps(f *elf.File, syms []elf.Symbol) (map[string]*LegacyDef, error) {
	defs := map[string]*LegacyDef{}
	for i, sec := range f.Sections {
		if !isLegacyMapSection(sec.Name) || sec.Type != elf.SHT_PROGBITS {
			continue
		}
		var ms []elf.Symbol
		for _, sym := range syms {
			typ := elf.ST_TYPE(sym.Info)
			if int(sym.Section) == i && sym.Name != "" && (typ == elf.STT_OBJECT || typ == elf.STT_NOTYPE) {
				ms = append(ms, sym)
			}
		}
		if len(ms) == 0 {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			return nil, fmt.Errorf("read section %s: %w", sec.Name, err)
		}
		if err := readDefs(defs, sec.Name, data, ms, f.ByteOrder); err != nil {
			return nil, err
		}
	}
	return defs, linkInner(defs)
}

// readDefs decodes the definitions of one section's map symbols.
func readDefs(defs map[string]*LegacyDef, section string, data []byte, syms []elf.Symbol, order binary.ByteOrder) error {
	size := uint64(len(data)) / uint64(len(syms))
	for _, sym := range syms {
		if sym.Size == 0 && uint64(len(data))%uint64(len(syms)) != 0 {
			return fmt.Errorf("section %s: %d bytes are no whole number of definitions for %d maps", section, len(data), len(syms))
		}
	}
	for _, sym := range syms {
		n := size
		if sym.Size > 0 {
			n = sym.Size
		}
		if n < 20 {
			return fmt.Errorf("map %s: definition of %d bytes, shorter than struct bpf_map_def (20)", sym.Name, n)
		}
		if n > 256 || sym.Value > uint64(len(data)) || n > uint64(len(data))-sym.Value {
			return fmt.Errorf("map %s: definition of %d bytes at offset %d outside section %s", sym.Name, n, sym.Value, section)
		}
		if defs[sym.Name] != nil {
			return fmt.Errorf("map %s: defined twice", sym.Name)
		}
		b := data[sym.Value : sym.Value+n]
		field := func(k int) uint32 {
			if 4*k+4 > len(b) {
				return 0
			}
			return order.Uint32(b[4*k:])
		}
		d := &LegacyDef{Layout: "bpf_map_def", Size: int(n), Type: ebpf.MapType(field(0)), KeySize: field(1),
			ValueSize: field(2), MaxEntries: field(3), Flags: field(4)}
		if n >= 32 {
			d.Layout = "bpf_elf_map"
			d.ID, d.Pinning, d.InnerID, d.InnerIndex = field(5), field(6), field(7), field(8)
		}
		defs[sym.Name] = d
	}
	return nil
}

// linkInner names the inner map of every bpf_elf_map map of maps by the
// id it gives.
func linkInner(defs map[string]*LegacyDef) error {
	byID := map[uint32]string{}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d := defs[name]; d.ID != 0 {
			if other, ok := byID[d.ID]; ok {
				return fmt.Errorf("maps %s and %s: both have id %d", other, name, d.ID)
			}
			byID[d.ID] = name
		}
	}
	for _, name := range names {
		d := defs[name]
		if d.InnerID == 0 || (d.Type != ebpf.ArrayOfMaps && d.Type != ebpf.HashOfMaps) {
			continue
		}
		inner, ok := byID[d.InnerID]
		if !ok {
			return fmt.Errorf("map %s: inner_id %d names no map", name, d.InnerID)
		}
		if inner == name {
			return fmt.Errorf("map %s: inner_id %d names the map itself", name, d.InnerID)
		}
		d.Inner = inner
	}
	return nil
}
