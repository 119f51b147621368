package interp

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/mapstate"
)

// MapOptions set up the map models.
type MapOptions struct {
	// NumCPU is the number of possible CPUs: the number of values per-CPU
	// maps hold (default 1).
	NumCPU int
	// HashSeed is the hash maps' jhash seed (the kernel's hashrnd; 0 is
	// what BPF_F_ZERO_SEED gives).
	HashSeed uint32
	// Flags are the maps' map_flags by name (BPF_F_NO_COMMON_LRU changes
	// the LRU model); see ObjectMapFlags.
	Flags map[string]uint32
}

// Maps is the modelled contents of every map one program uses.
type Maps struct {
	ncpu   int
	names  []string
	list   []*mapModel
	byName map[string]*mapModel
}

// mapModel is one map. Exactly one of arr, h, t, targets is in use.
type mapModel struct {
	name   string
	idx    int
	typ    ebpf.MapType
	ks, vs int
	max    uint32
	percpu bool
	frozen bool // .rodata: read-only to programs
	ncpu   int

	arr     []byte // arrays: max × ncpu values
	h       *htab
	t       *lpmTrie
	targets map[uint32][]byte // device and CPU maps
}

// ObjectMaps builds the maps of p as its object declares them (global
// data included, mapstate.ObjectDefaults) with start overlaid (nil:
// none). opts.Flags, when nil, are the object's (ObjectMapFlags).
func ObjectMaps(p *bpfprog.Program, start *mapstate.State, opts MapOptions) (*Maps, error) {
	s, err := mapstate.ObjectDefaults(p)
	if err != nil {
		return nil, err
	}
	if start != nil {
		s = mapstate.Overlay(s, start)
	}
	if opts.Flags == nil {
		if opts.Flags, err = ObjectMapFlags(p); err != nil {
			return nil, err
		}
	}
	return NewMaps(p, s, opts)
}

// NewMaps builds the maps of p from a state (validated against p; maps it
// does not name start empty or zeroed). Start from
// mapstate.Overlay(mapstate.ObjectDefaults(p), user) to get the object's
// global data, as ObjectMaps does.
func NewMaps(p *bpfprog.Program, s *mapstate.State, opts MapOptions) (*Maps, error) {
	if opts.NumCPU <= 0 {
		opts.NumCPU = 1
	}
	if s == nil {
		s = mapstate.New()
	}
	if err := s.Validate(p, "map state"); err != nil {
		return nil, err
	}
	ms := &Maps{ncpu: opts.NumCPU, byName: map[string]*mapModel{}}
	for name := range p.Maps {
		ms.names = append(ms.names, name)
	}
	slices.Sort(ms.names)
	for i, name := range ms.names {
		pm := p.Maps[name]
		mm := &mapModel{name: name, idx: i, typ: pm.Type, ks: int(pm.KeySize), vs: int(pm.ValueSize),
			max: pm.MaxEntries, percpu: mapstate.PerCPU(pm.Type), frozen: name == ".rodata", ncpu: opts.NumCPU}
		switch {
		case isArrayType(pm.Type):
			n := uint64(pm.MaxEntries) * uint64(mm.vs) * uint64(mm.cpus())
			if n > 1<<30 {
				return nil, fmt.Errorf("map %s: %d bytes of array values is too large to model", name, n)
			}
			mm.arr = make([]byte, n)
		case isHashType(pm.Type):
			mm.h = newHtab(mm, opts.HashSeed, opts.Flags[name])
		case pm.Type == ebpf.LPMTrie:
			mm.t = &lpmTrie{dataSize: mm.ks - 4, limit: int(mm.max)}
		default:
			mm.targets = map[uint32][]byte{}
		}
		ms.list = append(ms.list, mm)
		ms.byName[name] = mm
	}
	for name, m := range s.Maps {
		mm := ms.byName[name]
		for i, e := range m.Entries {
			vals := e.Values
			if vals == nil {
				vals = slices.Repeat([]mapstate.Hex{e.Value}, mm.cpus())
			}
			if len(vals) != mm.cpus() {
				return nil, fmt.Errorf("map state: map %s: entry %d: %d per-CPU values, want %d", name, i, len(vals), mm.cpus())
			}
			if err := mm.fill(e.Key, vals); err != nil {
				return nil, fmt.Errorf("map state: map %s: entry %d: %w", name, i, err)
			}
		}
	}
	return ms, nil
}

// NumCPU is the number of CPUs the per-CPU maps hold values for.
func (ms *Maps) NumCPU() int { return ms.ncpu }

func isArrayType(t ebpf.MapType) bool { return t == ebpf.Array || t == ebpf.PerCPUArray }

func isHashType(t ebpf.MapType) bool {
	switch t {
	case ebpf.Hash, ebpf.PerCPUHash, ebpf.LRUHash, ebpf.LRUCPUHash:
		return true
	}
	return false
}

func (mm *mapModel) cpus() int {
	if mm.percpu {
		return mm.ncpu
	}
	return 1
}

// cpuOf maps a CPU to the value slot per-CPU maps keep for it.
func (mm *mapModel) cpuOf(cpu int) int {
	if mm.percpu {
		return cpu
	}
	return 0
}

func (mm *mapModel) arrayValue(idx uint32, cpu int) []byte {
	at := (int(idx)*mm.cpus() + cpu) * mm.vs
	return mm.arr[at : at+mm.vs : at+mm.vs]
}

// fill sets an entry from a map state.
func (mm *mapModel) fill(key []byte, vals []mapstate.Hex) error {
	switch {
	case mm.arr != nil:
		idx := binary.LittleEndian.Uint32(key)
		for c, v := range vals {
			copy(mm.arrayValue(idx, c), v)
		}
	case mm.h != nil:
		e, _, err := mm.h.insert(key, 0)
		if err != nil {
			return err
		}
		for c, v := range vals {
			copy(e.vals[c], v)
		}
	case mm.t != nil:
		if r, _ := mm.t.update(key, vals[0], 0); r != 0 {
			return fmt.Errorf("LPM trie update failed with errno %d", -r)
		}
	default:
		mm.targets[binary.LittleEndian.Uint32(key)] = slices.Clone(vals[0])
	}
	return nil
}

// State reads the maps back into a state (canonical for the program).
func (ms *Maps) State() *mapstate.State {
	s := mapstate.New()
	for _, mm := range ms.list {
		m := &mapstate.Map{}
		add := func(key []byte, vals [][]byte) {
			e := mapstate.Entry{Key: slices.Clone(key)}
			if mm.percpu {
				for _, v := range vals {
					e.Values = append(e.Values, slices.Clone(v))
				}
			} else {
				e.Value = slices.Clone(vals[0])
			}
			m.Entries = append(m.Entries, e)
		}
		switch {
		case mm.arr != nil:
			for i := uint32(0); i < mm.max; i++ {
				vals := make([][]byte, mm.cpus())
				nonzero := false
				for c := range vals {
					vals[c] = mm.arrayValue(i, c)
					nonzero = nonzero || slices.ContainsFunc(vals[c], func(b byte) bool { return b != 0 })
				}
				if nonzero {
					add(binary.LittleEndian.AppendUint32(nil, i), vals)
				}
			}
		case mm.h != nil:
			for _, e := range mm.h.all() {
				add(e.key, e.vals)
			}
		case mm.t != nil:
			mm.t.walk(func(key, val []byte) { add(key, [][]byte{val}) })
		default:
			for _, k := range slices.Sorted(maps.Keys(mm.targets)) {
				add(binary.LittleEndian.AppendUint32(nil, k), [][]byte{mm.targets[k]})
			}
		}
		s.Maps[mm.name] = m
	}
	return s
}

// Order returns the keys of a hash map in the order the kernel's
// BPF_MAP_GET_NEXT_KEY visits them: bucket by bucket, each chain from its
// head. It returns nil for other maps.
func (ms *Maps) Order(name string) [][]byte {
	mm := ms.byName[name]
	if mm == nil || mm.h == nil {
		return nil
	}
	var keys [][]byte
	for _, e := range mm.h.all() {
		keys = append(keys, e.key)
	}
	return keys
}

// ObjectMapFlags returns the map_flags of p's maps, as its object file
// gives them (bpfprog.Map.Flags). It never fails.
func ObjectMapFlags(p *bpfprog.Program) (map[string]uint32, error) {
	flags := map[string]uint32{}
	for name, m := range p.Maps {
		flags[name] = m.Flags
	}
	return flags, nil
}
