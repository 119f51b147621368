package mapstate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/fail"
)

// PerCPU reports whether maps of type t hold one value per CPU.
func PerCPU(t ebpf.MapType) bool {
	switch t {
	case ebpf.PerCPUArray, ebpf.PerCPUHash, ebpf.LRUCPUHash:
		return true
	}
	return false
}

// IsArray reports whether maps of type t hold every index below max_entries.
func IsArray(t ebpf.MapType) bool { return t == ebpf.Array || t == ebpf.PerCPUArray }

// Fillable reports whether entries of maps of type t can be given as bytes.
func Fillable(t ebpf.MapType) bool {
	switch t {
	case ebpf.Array, ebpf.PerCPUArray, ebpf.Hash, ebpf.PerCPUHash, ebpf.LRUHash,
		ebpf.LRUCPUHash, ebpf.LPMTrie, ebpf.DevMap, ebpf.DevMapHash, ebpf.CPUMap:
		return true
	}
	return false
}

// Sockets says whether a map's entries are sockets (XSK maps): a state
// may name their keys, meaning "an AF_XDP socket here"; the value is not
// used. They are not Fillable from bytes: testrun creates the sockets.
func Sockets(t ebpf.MapType) bool { return t == ebpf.XSKMap }

// Validate checks s against the maps program p uses: every map named
// exists and can be filled, keys and values have the map's sizes, array
// indices are in range, LPM prefixes fit, no key repeats and no map holds
// more than max_entries entries. Errors are input errors about file.
func (s *State) Validate(p *bpfprog.Program, file string) error {
	for _, name := range sortedKeys(s.Maps) {
		pm, ok := p.Maps[name]
		if !ok {
			return fail.Inputf(file, "map %s: program %s uses no such map (maps: %v)", name, p.Name, sortedKeys(p.Maps))
		}
		if err := validateMap(pm, s.Maps[name]); err != nil {
			return fail.Inputf(file, "map %s: %v", name, err)
		}
	}
	return nil
}

func validateMap(pm *bpfprog.Map, m *Map) error {
	if len(m.Entries) > 0 && !Fillable(pm.Type) && !Sockets(pm.Type) {
		return fmt.Errorf("entries of %v maps cannot be given as bytes", pm.Type)
	}
	if uint64(len(m.Entries)) > uint64(pm.MaxEntries) {
		return fmt.Errorf("%d entries, more than max_entries %d", len(m.Entries), pm.MaxEntries)
	}
	seen := map[string]int{}
	for i, e := range m.Entries {
		if len(e.Key) != int(pm.KeySize) {
			return fmt.Errorf("entry %d: key has %d bytes, want %d", i, len(e.Key), pm.KeySize)
		}
		if j, dup := seen[string(e.Key)]; dup {
			return fmt.Errorf("entry %d: key %x repeats entry %d", i, []byte(e.Key), j)
		}
		seen[string(e.Key)] = i
		if e.Values != nil && !PerCPU(pm.Type) {
			return fmt.Errorf("entry %d: per-CPU values for a %v map", i, pm.Type)
		}
		if e.Value == nil && len(e.Values) == 0 {
			return fmt.Errorf("entry %d: no value", i)
		}
		for _, v := range append([]Hex{e.Value}, e.Values...) {
			if v != nil && len(v) != int(pm.ValueSize) {
				return fmt.Errorf("entry %d: value has %d bytes, want %d", i, len(v), pm.ValueSize)
			}
		}
		switch {
		case IsArray(pm.Type):
			if k := binary.LittleEndian.Uint32(e.Key); k >= pm.MaxEntries {
				return fmt.Errorf("entry %d: index %d out of range (max_entries %d)", i, k, pm.MaxEntries)
			}
		case pm.Type == ebpf.LPMTrie:
			if pm.KeySize < 4 {
				return fmt.Errorf("LPM trie key size %d is below 4", pm.KeySize)
			}
			if pl := binary.LittleEndian.Uint32(e.Key); pl > (pm.KeySize-4)*8 {
				return fmt.Errorf("entry %d: prefix length %d exceeds %d bits", i, pl, (pm.KeySize-4)*8)
			}
		}
	}
	return nil
}

// Canonical returns s in canonical form for the maps of p: keys sorted,
// per-CPU values collapsed to one value when every CPU holds the same
// bytes, and all-zero array entries left out. Maps p does not use are kept
// as they are.
func (s *State) Canonical(p *bpfprog.Program) *State {
	c := New()
	for name, m := range s.Clone().Maps {
		pm := p.Maps[name]
		cm := &Map{}
		for _, e := range m.Entries {
			if len(e.Values) > 0 && allEqual(e.Values) {
				e.Value, e.Values = e.Values[0], nil
			}
			if pm != nil && IsArray(pm.Type) && zero(e.Value) && allZero(e.Values) {
				continue
			}
			cm.Entries = append(cm.Entries, e)
		}
		c.Maps[name] = cm
	}
	c.sort()
	return c
}

// Diff lists the differences between two states, map by map and key by
// key, after putting both in canonical form for p. It is empty when they
// hold the same contents; a map missing from one side counts as empty.
func Diff(p *bpfprog.Program, a, b *State) []string {
	a, b = a.Canonical(p), b.Canonical(p)
	var out []string
	names := sortedKeys(a.Maps)
	for n := range b.Maps {
		if _, ok := a.Maps[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		ea, eb := entries(a.Maps[n]), entries(b.Maps[n])
		for _, k := range sortedKeys(ea) {
			x, y := ea[k], eb[k]
			switch {
			case y == nil:
				out = append(out, fmt.Sprintf("map %s: key %x only on the left: %s", n, k, show(x)))
			case show(x) != show(y):
				out = append(out, fmt.Sprintf("map %s: key %x: %s != %s", n, k, show(x), show(y)))
			}
		}
		for _, k := range sortedKeys(eb) {
			if ea[k] == nil {
				out = append(out, fmt.Sprintf("map %s: key %x only on the right: %s", n, k, show(eb[k])))
			}
		}
	}
	return out
}

func entries(m *Map) map[string]*Entry {
	out := map[string]*Entry{}
	if m != nil {
		for i := range m.Entries {
			out[string(m.Entries[i].Key)] = &m.Entries[i]
		}
	}
	return out
}

func show(e *Entry) string {
	if e.Values == nil {
		return fmt.Sprintf("%x", []byte(e.Value))
	}
	return fmt.Sprintf("%x", e.Values)
}

func allEqual(vs []Hex) bool {
	for _, v := range vs[1:] {
		if !bytes.Equal(v, vs[0]) {
			return false
		}
	}
	return true
}

func zero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func allZero(vs []Hex) bool {
	for _, v := range vs {
		if !zero(v) {
			return false
		}
	}
	return true
}
